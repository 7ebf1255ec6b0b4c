/**
 * TLS for the `tls://` transport (Dask's `tls://` with its `Security`): every
 * connection is encrypted, and both ends prove they belong to the cluster,
 * each with a certificate signed by the cluster's certificate authority (CA).
 * As in Dask, the certificate's host name is not checked: a cluster's
 * processes come and go on many addresses, and the CA is what is trusted.
 */

import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { createSecureContext, type SecureContext } from "node:tls";
import { checkKnownOptions, type OptionNames } from "../util/knownOptions.ts";
import { deviceProblemSync } from "../util/regularFile.ts";
import { showValue } from "../util/showValue.ts";

/** A process's TLS credentials, PEM-encoded. */
export interface TlsCredentials {
  /** The certificate of the CA whose certificates are trusted (the peers'). */
  readonly ca: string | Buffer;
  /** This process's certificate, signed by that CA. */
  readonly cert: string | Buffer;
  /** Its private key. */
  readonly key: string | Buffer;
}

/** Where {@link loadTlsCredentials} reads the credentials from. */
export interface TlsFiles {
  /** The path of the CA's certificate (PEM). */
  readonly caFile: string;
  /** The path of this process's certificate (PEM), signed by that CA. */
  readonly certFile: string;
  /** The path of its private key (PEM). */
  readonly keyFile: string;
}

/** The secure contexts made so far, by credentials: one a process, made once. */
const contexts = new WeakMap<TlsCredentials, SecureContext>();

/**
 * The secure context of `credentials`, for `tls.connect` and
 * `tls.createServer`. Throws an Error saying what is wrong with them (PEM that
 * does not parse, a key that is not the certificate's).
 */
export function secureContextFor(credentials: TlsCredentials): SecureContext {
  let context = contexts.get(credentials);
  if (context === undefined) {
    // OpenSSL takes a CA without a certificate in it (a key given in its place) and
    // then refuses every peer: say so now, not at each connection.
    if (!holdsCertificate(credentials.ca)) {
      throw new Error(
        "the TLS credentials cannot be used: the CA holds no certificate (a -----BEGIN CERTIFICATE----- block): is it a key?",
      );
    }
    try {
      context = createSecureContext({
        ca: credentials.ca,
        cert: credentials.cert,
        key: credentials.key,
      });
    } catch (err) {
      throw new Error(
        `the TLS credentials cannot be used: ${(err as Error).message} (the certificate and the key must be a pair, and all three PEM)`,
      );
    }
    contexts.set(credentials, context);
  }
  return context;
}

/** True when `pem` holds a certificate that parses. */
function holdsCertificate(pem: string | Buffer): boolean {
  try {
    new X509Certificate(pem);
    return true;
  } catch {
    return false;
  }
}

/** Every field of {@link TlsFiles}: others are refused. */
const TLS_FILES: OptionNames<TlsFiles> = { caFile: true, certFile: true, keyFile: true };

/**
 * Read TLS credentials from PEM files. Throws an Error naming the file that
 * cannot be read, or that holds no PEM block, and a TypeError for `files`
 * that are not the three paths (`{ ca }` for `{ caFile }` was read as the
 * file "undefined").
 */
export function loadTlsCredentials(files: TlsFiles): TlsCredentials {
  if (typeof files !== "object" || files === null || Array.isArray(files)) {
    throw new TypeError(
      `loadTlsCredentials: expected { caFile, certFile, keyFile }, got ${showValue(files)}`,
    );
  }
  checkKnownOptions("loadTlsCredentials", files, TLS_FILES);
  for (const name of Object.keys(TLS_FILES) as (keyof TlsFiles)[]) {
    const path: unknown = files[name];
    if (typeof path !== "string" || path === "") {
      throw new TypeError(
        `loadTlsCredentials: ${name} must be the path of a PEM file, got ${showValue(path)}`,
      );
    }
  }
  const read = (what: string, path: string): Buffer => {
    // A link to /dev/zero was read forever, a FIFO until some process wrote to it.
    const device = deviceProblemSync(path);
    if (device !== null) throw new Error(`cannot read the TLS ${what} ${path}: ${device}`);
    let data: Buffer;
    try {
      data = readFileSync(path);
    } catch (err) {
      throw new Error(`cannot read the TLS ${what} ${path}: ${(err as Error).message}`);
    }
    if (!data.includes("-----BEGIN ")) {
      throw new Error(`the TLS ${what} ${path} holds no PEM block (-----BEGIN …)`);
    }
    return data;
  };
  const ca = read("CA file", files.caFile);
  if (!holdsCertificate(ca)) {
    throw new Error(
      `the TLS CA file ${files.caFile} holds no certificate (a -----BEGIN CERTIFICATE----- block): is it a key?`,
    );
  }
  const credentials = {
    ca,
    cert: read("certificate", files.certFile),
    key: read("key", files.keyFile),
  };
  secureContextFor(credentials); // says now, naming the problem, if they cannot be used
  return credentials;
}

/**
 * Why a server with TLS credentials may not listen at `listen`, or null: on
 * `tcp://` it would serve everyone in the clear, without asking for a
 * certificate, which is never what giving it credentials meant.
 */
export function plainListenProblem(listen: string, what: string): string | null {
  if (!listen.startsWith("tcp://")) return null;
  return (
    `${what} listen ${listen}: with TLS credentials it must listen on tls:// ` +
    `(tls://${listen.slice("tcp://".length)}): on tcp:// anyone could connect without a certificate`
  );
}

/** Why `v` is not usable as {@link TlsCredentials}, or null. */
export function tlsCredentialsProblem(v: unknown): string | null {
  if (typeof v !== "object" || v === null) return "tls must be an object { ca, cert, key }";
  for (const k of ["ca", "cert", "key"] as const) {
    const x = (v as Record<string, unknown>)[k];
    if (typeof x !== "string" && !Buffer.isBuffer(x)) {
      return `tls.${k} must be PEM text (a string or a Buffer)`;
    }
  }
  try {
    secureContextFor(v as TlsCredentials);
  } catch (err) {
    return `tls: ${(err as Error).message}`;
  }
  return null;
}
