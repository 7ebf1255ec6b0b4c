/**
 * Why a `tls://` listener refused a peer, in words an operator can act on:
 * the peer itself learns only that the connection closed (TLS 1.3 lets its
 * handshake end before the server has checked its certificate), so the
 * listener's process is where the reason must be said.
 */

/** Certificate checks OpenSSL fails when the peer's certificate is not of this cluster's CA. */
const NOT_OUR_CA =
  /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|UNABLE_TO_VERIFY_LEAF_SIGNATURE|CERT_SIGNATURE_FAILURE)$/;

/** What a peer that showed no certificate is told to do about it. */
const NO_CERTIFICATE =
  "it showed no TLS certificate: give it --tls-cert and --tls-key (and --tls-ca-file)";

/**
 * Why a peer that completed the handshake is refused, from its socket's
 * `authorizationError` (an OpenSSL verification code, or an Error), and
 * whether it showed a certificate at all (OpenSSL then says only that it
 * found no issuer).
 */
export function unauthorizedPeerReason(
  authorizationError: Error | string | null,
  showedCertificate = true,
): string {
  if (!showedCertificate) return NO_CERTIFICATE;
  const code =
    authorizationError instanceof Error
      ? ((authorizationError as NodeJS.ErrnoException).code ?? authorizationError.message)
      : (authorizationError ?? "");
  if (code === "CERT_HAS_EXPIRED") return "its TLS certificate has expired (CERT_HAS_EXPIRED)";
  if (code === "CERT_NOT_YET_VALID") {
    return "its TLS certificate is not valid yet (CERT_NOT_YET_VALID): is its clock, or this one's, wrong?";
  }
  if (NOT_OUR_CA.test(code)) {
    return `its TLS certificate is not signed by this cluster's CA (${code}): give it a certificate of the CA in --tls-ca-file`;
  }
  if (code === "") return "its TLS certificate was refused";
  return `its TLS certificate was refused (${code})`;
}

/**
 * Why a peer failed the handshake itself, from the listener's `tlsClientError`;
 * null for a peer that hung up or reset the connection before or during it (a
 * port check, the scheduler's check that a worker's address is reachable, a
 * peer that refused this side's certificate): nothing to tell.
 */
export function handshakeFailureReason(err: NodeJS.ErrnoException): string | null {
  const code = err.code ?? "";
  if (code === "ECONNRESET" || code === "EPIPE" || code === "ETIMEDOUT") return null;
  if (code === "ERR_SSL_WRONG_VERSION_NUMBER") {
    return "it does not speak TLS: is it given a tcp:// address for this tls:// one?";
  }
  if (code === "ERR_SSL_HTTP_REQUEST") return "it sent an HTTP request, not a TLS handshake";
  if (code === "ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE") return NO_CERTIFICATE;
  // OpenSSL's messages end with the reason after the function, file and line.
  const reason = /SSL routines:[^:]*:([^:]+)/.exec(err.message)?.[1];
  return `the TLS handshake failed: ${reason ?? err.message}${code === "" ? "" : ` (${code})`}`;
}
