import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTlsCertificate, TLS_CERT_FILE, TLS_KEY_FILE } from '../../src/inbound/tls-certificate.js';

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'tls-cert-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('the STARTTLS certificate', () => {
  it('is made self-signed for the host name once into the data dir (key 0600), then kept', async () => {
    const dataDir = path.join(dir, 'data');
    const first = await loadTlsCertificate({
      certFile: undefined,
      keyFile: undefined,
      dataDir,
      hostname: 'mail.example.test',
    });
    expect(first.created).toBe(true);
    const x509 = new crypto.X509Certificate(first.cert);
    expect(x509.subject).toContain('CN=mail.example.test');
    expect(x509.subjectAltName).toContain('DNS:mail.example.test');
    expect(x509.checkPrivateKey(crypto.createPrivateKey(first.key))).toBe(true);
    expect((await fs.stat(path.join(dataDir, TLS_KEY_FILE))).mode & 0o777).toBe(0o600);

    const again = await loadTlsCertificate({
      certFile: undefined,
      keyFile: undefined,
      dataDir,
      hostname: 'other.test',
    });
    expect(again).toEqual({ cert: first.cert, key: first.key, created: false });
  }, 30_000);

  it("is MAILER_TLS_CERT/MAILER_TLS_KEY when set, and refused at start when the key is not the certificate's", async () => {
    const a = await loadTlsCertificate({
      certFile: undefined,
      keyFile: undefined,
      dataDir: path.join(dir, 'a'),
      hostname: 'a.test',
    });
    const b = await loadTlsCertificate({
      certFile: undefined,
      keyFile: undefined,
      dataDir: path.join(dir, 'b'),
      hostname: 'b.test',
    });
    const certFile = path.join(dir, 'a', TLS_CERT_FILE);
    const configured = await loadTlsCertificate({
      certFile,
      keyFile: path.join(dir, 'a', TLS_KEY_FILE),
      dataDir: path.join(dir, 'none'),
      hostname: 'x',
    });
    expect(configured).toEqual({ cert: a.cert, key: a.key, created: false });
    await expect(fs.stat(path.join(dir, 'none'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(b.cert).not.toBe(a.cert);
    await expect(
      loadTlsCertificate({ certFile, keyFile: path.join(dir, 'b', TLS_KEY_FILE), dataDir: dir, hostname: 'x' }),
    ).rejects.toThrow(/the private key does not belong to the certificate/);
  }, 30_000);
});
