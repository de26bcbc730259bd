import childProcess, { execFileSync, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import dns from 'node:dns';
import fs from 'node:fs';
import fsp, { writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * test/helpers/unit-no-io.ts, the unit project's setup file, holds every unit test to "no I/O": these calls
 * must throw (or reject) naming the rule, whichever way the module was imported. Without the guard each call
 * below really runs (or fails for its own reason), and the expectations fail.
 */
const RULE = /unit tests do no I\/O/;
const repoRoot = path.resolve(import.meta.dirname, '../..');
// In a folder that does not exist: without the guard the writes below fail too (ENOENT, not the rule), and write nothing.
const scratch = path.join(os.tmpdir(), `unit-no-io-${process.pid}-absent`, 'never-written');

describe("the unit project's no-I/O guard", () => {
  it('refuses to start a process', () => {
    expect(() => spawnSync('true')).toThrow(RULE);
    expect(() => execFileSync('true')).toThrow(RULE);
    expect(() => childProcess.spawn('true')).toThrow(RULE);
    expect(() => childProcess.exec('true')).toThrow(RULE);
    expect(() => childProcess.fork('nothing.js')).toThrow(RULE);
  });

  it('refuses to open, listen on or send from a socket, by any client', async () => {
    expect(() => net.connect(9, '127.0.0.1')).toThrow(RULE);
    expect(() => http.get('http://127.0.0.1:9/')).toThrow(RULE);
    expect(() => net.createServer().listen(0, '127.0.0.1')).toThrow(RULE);
    expect(() => http.createServer().listen(0)).toThrow(RULE);
    const udp = dgram.createSocket('udp4');
    expect(() => udp.bind(0)).toThrow(RULE);
    expect(() => udp.send('x', 9, '127.0.0.1')).toThrow(RULE);
    udp.close();
    await expect(fetch('http://127.0.0.1:2/')).rejects.toMatchObject({
      cause: expect.objectContaining({ message: expect.stringMatching(RULE) as unknown }),
    });
  });

  it('refuses DNS queries, but answers a literal address without one', async () => {
    expect(() => dns.lookup('example.com', () => {})).toThrow(RULE);
    await expect(dns.promises.lookup('example.com')).rejects.toThrow(RULE);
    await expect(dns.promises.resolveMx('example.com')).rejects.toThrow(RULE);
    await expect(new dns.promises.Resolver().resolveTxt('example.com')).rejects.toThrow(RULE);
    expect(() => new dns.Resolver().resolve4('example.com', () => {})).toThrow(RULE);
    expect(await dns.promises.lookup('127.0.0.1')).toEqual({ address: '127.0.0.1', family: 4 });
  });

  it('refuses to write, create or remove a file', async () => {
    expect(() => fs.writeFileSync(scratch, 'x')).toThrow(RULE);
    expect(() => fs.mkdirSync(scratch)).toThrow(RULE);
    expect(() => fs.openSync(scratch, 'w')).toThrow(RULE);
    expect(() => fs.createWriteStream(scratch)).toThrow(RULE);
    expect(() => fs.rmSync(scratch, { force: true })).toThrow(RULE);
    await expect(writeFile(scratch, 'x')).rejects.toThrow(RULE);
    await expect(fsp.mkdtemp(scratch)).rejects.toThrow(RULE);
    await expect(fsp.open(scratch, 'a')).rejects.toThrow(RULE);
    expect(fs.existsSync(scratch)).toBe(false);
  });

  it("refuses to read a repository file, but reads the test's fixtures", async () => {
    expect(() => fs.readFileSync(path.join(repoRoot, 'docker-compose.yml'))).toThrow(RULE);
    expect(() => fs.readdirSync(path.join(repoRoot, 'deploy'))).toThrow(RULE);
    await expect(fsp.readFile(path.join(repoRoot, 'Dockerfile'))).rejects.toThrow(RULE);
    expect(() => fs.openSync(path.join(repoRoot, 'package.json'), 'r')).toThrow(RULE);
    expect(fs.readFileSync(path.join(repoRoot, 'test/fixtures/console-static/js/session.js'), 'utf8')).toContain(
      'export',
    );
  });
});
