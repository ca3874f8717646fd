/**
 * Counts the commands an ioredis client sends. The server's INFO commandstats also counts what Lua
 * scripts run inside Redis, so it cannot tell one EVALSHA round trip from five commands sent; this
 * counter, on the authorizer's own client, can. Pipelined commands go through sendCommand one by one
 * too, so a pipeline of n commands counts n.
 */
import type { RedisConnection } from '../core/budget/redis-client';

export interface CommandCounter {
  /** Commands sent by the client since it was wrapped. */
  sent(): number;
}

export function countSentCommands(client: RedisConnection): CommandCounter {
  let sent = 0;
  // A Cluster's sendCommand takes each command once, before routing it (a redirection is not counted).
  const sender = client as unknown as { sendCommand: (...args: unknown[]) => unknown };
  const send = sender.sendCommand.bind(client);
  sender.sendCommand = (...args: unknown[]) => {
    sent++;
    return send(...args);
  };
  return { sent: () => sent };
}
