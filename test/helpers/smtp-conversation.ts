import net from 'node:net';
import tls from 'node:tls';

/** One SMTP reply: its code and its lines' text (after `250-` / `250 `). */
export interface SmtpAnswer {
  code: number;
  lines: string[];
  /** The whole reply as received, for failure messages. */
  text: string;
}

/**
 * A raw SMTP client for tests that check a server's replies line by line: send a command, read the reply;
 * `startTls` upgrades the same connection after a 220 to STARTTLS (any certificate is accepted).
 */
export class SmtpConversation {
  private buffer = '';
  private waiting: (() => void) | undefined;
  private closed = false;

  private constructor(private socket: net.Socket) {
    this.listen();
  }

  /** `localAddress`: the address to connect from (another loopback address, 127.0.0.2, is another client). */
  static async open(host: string, port: number, localAddress?: string): Promise<SmtpConversation> {
    const socket = net.connect({ host, port, localAddress });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new SmtpConversation(socket);
  }

  private listen(): void {
    this.socket.on('data', (chunk: Buffer) => {
      this.buffer += chunk.toString('latin1');
      this.waiting?.();
    });
    this.socket.on('close', () => {
      this.closed = true;
      this.waiting?.();
    });
    this.socket.on('error', () => {});
  }

  /** The next complete reply (the greeting first). */
  async read(timeoutMs = 20_000): Promise<SmtpAnswer> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = /^\d{3} .*\r\n/m.exec(this.buffer);
      if (end) {
        const text = this.buffer.slice(0, end.index + end[0].length);
        this.buffer = this.buffer.slice(text.length);
        const rows = text.split('\r\n').filter((l) => l !== '');
        return { code: Number(rows[rows.length - 1]!.slice(0, 3)), lines: rows.map((l) => l.slice(4)), text };
      }
      if (this.closed) throw new Error(`connection closed; unread: ${JSON.stringify(this.buffer)}`);
      if (Date.now() > deadline)
        throw new Error(`no complete reply in ${timeoutMs} ms; have ${JSON.stringify(this.buffer)}`);
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        setTimeout(resolve, 200);
      });
      this.waiting = undefined;
    }
  }

  /** Sends one command line and reads its reply. */
  async command(line: string): Promise<SmtpAnswer> {
    this.socket.write(`${line}\r\n`);
    return this.read();
  }

  /** Sends a message body after a 354, dot-stuffed, and reads the final reply. */
  async data(message: string): Promise<SmtpAnswer> {
    const body = message.replace(/\r?\n/g, '\r\n').replace(/^\./gm, '..');
    this.socket.write(`${body}${body.endsWith('\r\n') ? '' : '\r\n'}.\r\n`);
    return this.read();
  }

  /** After `STARTTLS` was answered 220: the same connection, encrypted. */
  async startTls(): Promise<void> {
    this.socket.removeAllListeners('data');
    this.socket.removeAllListeners('close');
    const secure = tls.connect({ socket: this.socket, rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => {
      secure.once('secureConnect', resolve);
      secure.once('error', reject);
    });
    this.socket = secure;
    this.buffer = '';
    this.listen();
  }

  get encrypted(): boolean {
    return this.socket instanceof tls.TLSSocket && this.socket.encrypted;
  }

  close(): void {
    this.socket.destroy();
  }
}
