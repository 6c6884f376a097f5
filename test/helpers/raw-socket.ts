import net from 'node:net';

/**
 * Sends raw bytes to a listener on loopback and collects whatever it answers until it closes or goes quiet for
 * `quietMs`: for what an HTTP client library would refuse to send (duplicate Host headers, no HTTP at all).
 */
export function rawExchange(port: number, data: string, quietMs = 300): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(data));
    let out = '';
    let timer = setTimeout(() => s.destroy(), quietMs);
    s.on('data', (d) => {
      out += d.toString();
      clearTimeout(timer);
      timer = setTimeout(() => s.destroy(), quietMs);
    });
    s.on('close', () => resolve(out));
    s.on('error', () => resolve(out));
  });
}
