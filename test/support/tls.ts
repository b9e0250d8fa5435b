/**
 * Certificates made at test time: a private certificate authority and a server certificate it signed for
 * 127.0.0.1, ::1 and localhost (or other names), so that tests can run real HTTPS (and SMTPS) servers on the
 * loopback interface.
 *
 * A client in this process trusts the authority through its own option (NodeOutbound's `ca`); a server or CLI
 * process started by a test trusts it through `NODE_EXTRA_CA_CERTS=<caFile>` in that process's environment
 * (Node reads the variable only at start, so it cannot be set for the running test process).
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { generate } from "selfsigned"

export interface TestTls {
  /** The authority's certificate (PEM): what a client must trust. */
  readonly caPem: string
  /** The server certificate's private key (PEM). */
  readonly keyPem: string
  /** The server certificate (PEM), signed by the authority. */
  readonly certPem: string
  /** The authority's certificate written to a file in a fresh temporary directory (for NODE_EXTRA_CA_CERTS). */
  readonly caFile: string
  /** Removes the temporary directory. */
  readonly cleanup: () => Promise<void>
}

export interface TestTlsOptions {
  /** DNS names in the server certificate; default ["localhost"]. */
  readonly dnsNames?: ReadonlyArray<string>
  /** IP addresses in the server certificate; default ["127.0.0.1", "::1"]. */
  readonly ipAddresses?: ReadonlyArray<string>
}

const validity = () => {
  const notBeforeDate = new Date(Date.now() - 60 * 60 * 1000)
  const notAfterDate = new Date(Date.now() + 7 * 24 * 60 * 60 * 1000)
  return { notBeforeDate, notAfterDate }
}

/** A fresh authority and a server certificate it signed (EC P-256, SHA-256: fast to make). */
export const makeTestTls = async (options: TestTlsOptions = {}): Promise<TestTls> => {
  const dnsNames = options.dnsNames ?? ["localhost"]
  const ipAddresses = options.ipAddresses ?? ["127.0.0.1", "::1"]
  const ca = await generate([{ name: "commonName", value: "Convene Test CA" }], {
    keyType: "ec",
    algorithm: "sha256",
    ...validity(),
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true }
    ]
  })
  const leaf = await generate([{ name: "commonName", value: dnsNames[0] ?? ipAddresses[0] ?? "localhost" }], {
    keyType: "ec",
    algorithm: "sha256",
    ...validity(),
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: "basicConstraints", cA: false, critical: true },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          ...dnsNames.map((value) => ({ type: 2 as const, value })),
          ...ipAddresses.map((ip) => ({ type: 7 as const, ip }))
        ]
      }
    ]
  })
  const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "convene-tls-"))
  const caFile = Path.join(dir, "ca.pem")
  await Fs.writeFile(caFile, ca.cert)
  return {
    caPem: ca.cert,
    keyPem: leaf.private,
    certPem: leaf.cert,
    caFile,
    cleanup: () => Fs.rm(dir, { recursive: true, force: true })
  }
}
