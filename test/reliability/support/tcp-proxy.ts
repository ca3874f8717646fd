/**
 * A loopback TCP proxy that can cut the line: `cut()` closes every open connection and refuses new
 * ones until `restore()`, as a network partition or a failover between client and server does. Used in
 * front of redis-server for Redis blips that keep the data (the server itself never stops).
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  readonly host: string;
  readonly port: number;
  cut(): void;
  restore(): void;
  /** New connections go to this address from now on (an endpoint moved to a promoted replica). */
  retarget(host: string, port: number): void;
  stop(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let cutOff = false;
  let target = { host: targetHost, port: targetPort };

  const server: Server = createServer((client) => {
    if (cutOff) {
      client.destroy();
      return;
    }
    const upstream = createConnection(target);
    open.add(client);
    open.add(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no TCP address');

  return {
    host: '127.0.0.1',
    port: address.port,
    cut() {
      cutOff = true;
      for (const socket of open) socket.destroy();
      open.clear();
    },
    restore() {
      cutOff = false;
    },
    retarget(host, port) {
      target = { host, port };
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
