/**
 * TLS for the `tls://` transport (Dask's `tls://` with its `Security`): every
 * connection is encrypted, and both ends prove they belong to the cluster,
 * each with a certificate signed by the cluster's certificate authority (CA).
 * As in Dask, the certificate's host name is not checked: a cluster's
 * processes come and go on many addresses, and the CA is what is trusted.
 */

import { readFileSync } from "node:fs";
import type { SecureContextOptions } from "node:tls";

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
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
}

/** The options `tls.connect` and `tls.createServer` get from `credentials`. */
export function secureContextOptions(credentials: TlsCredentials): SecureContextOptions {
  return { ca: credentials.ca, cert: credentials.cert, key: credentials.key };
}

/**
 * Read TLS credentials from PEM files. Throws an Error naming the file that
 * cannot be read, or that holds no PEM block.
 */
export function loadTlsCredentials(files: TlsFiles): TlsCredentials {
  const read = (what: string, path: string): Buffer => {
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
  return {
    ca: read("CA file", files.caFile),
    cert: read("certificate", files.certFile),
    key: read("key", files.keyFile),
  };
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
  return null;
}
