/**
 * Test helper: the TLS credentials of `test/fixtures/tls` (a CA, and a
 * certificate and key it signed, valid for a hundred years), and those of a
 * certificate another CA signed, which the cluster's refuses.
 */

import { fileURLToPath } from "node:url";
import { loadTlsCredentials, type TlsCredentials, type TlsFiles } from "./tls.ts";

const DIR = fileURLToPath(new URL("../../test/fixtures/tls/", import.meta.url));

/** The files of the test cluster's credentials. */
export const TEST_TLS_FILES: TlsFiles = {
  caFile: `${DIR}ca.pem`,
  certFile: `${DIR}cert.pem`,
  keyFile: `${DIR}key.pem`,
};

/** The command-line flags of the test cluster's credentials. */
export const TEST_TLS_FLAGS: readonly string[] = [
  "--tls-ca-file",
  TEST_TLS_FILES.caFile,
  "--tls-cert",
  TEST_TLS_FILES.certFile,
  "--tls-key",
  TEST_TLS_FILES.keyFile,
];

/** The test cluster's credentials. */
export function testTls(): TlsCredentials {
  return loadTlsCredentials(TEST_TLS_FILES);
}

/** Credentials whose certificate another CA signed (self-signed), trusting that CA only. */
export function strangerTls(): TlsCredentials {
  return loadTlsCredentials({
    caFile: `${DIR}other.pem`,
    certFile: `${DIR}other.pem`,
    keyFile: `${DIR}other-key.pem`,
  });
}
