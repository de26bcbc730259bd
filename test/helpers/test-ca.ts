/**
 * A certificate authority made for one test run (selfsigned), and certificates it issues for host names: what
 * an MTA-STS policy host or an MX host presents so that verification against the test CA succeeds, or fails
 * when the certificate is self-signed or for another name.
 */
import selfsigned from 'selfsigned';

export interface KeyAndCert {
  key: string;
  cert: string;
}

export interface TestCa extends KeyAndCert {
  /** A certificate for `names` (DNS subject alternative names), signed by this CA. */
  issue(names: string[]): Promise<KeyAndCert>;
}

const inOneDay = () => new Date(Date.now() + 86_400_000);
const anHourAgo = () => new Date(Date.now() - 3_600_000);

/** A leaf certificate's extensions: a server certificate for `names`. */
const leafExtensions = (names: string[]) => [
  { name: 'basicConstraints' as const, cA: false },
  { name: 'keyUsage' as const, digitalSignature: true, keyEncipherment: true },
  { name: 'extKeyUsage' as const, serverAuth: true },
  { name: 'subjectAltName' as const, altNames: names.map((value) => ({ type: 2 as const, value })) },
];

export async function createTestCa(): Promise<TestCa> {
  const ca = await selfsigned.generate([{ name: 'commonName', value: 'mailer test CA' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: anHourAgo(),
    notAfterDate: inOneDay(),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const caPair = { key: ca.private, cert: ca.cert };
  return {
    ...caPair,
    async issue(names) {
      const leaf = await selfsigned.generate([{ name: 'commonName', value: names[0] ?? 'localhost' }], {
        keySize: 2048,
        algorithm: 'sha256',
        notBeforeDate: anHourAgo(),
        notAfterDate: inOneDay(),
        extensions: leafExtensions(names),
        ca: caPair,
      });
      return { key: leaf.private, cert: leaf.cert };
    },
  };
}

/** A certificate for `names` that signs itself: no CA vouches for it. */
export async function selfSignedCertificate(names: string[]): Promise<KeyAndCert> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: names[0] ?? 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: anHourAgo(),
    notAfterDate: inOneDay(),
    extensions: leafExtensions(names),
  });
  return { key: pems.private, cert: pems.cert };
}
