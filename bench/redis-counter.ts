/**
 * Counts the commands an ioredis client sends. The server's INFO commandstats also counts what Lua
 * scripts run inside Redis, so it cannot tell one EVALSHA round trip from five commands sent; this
 * counter, on the authorizer's own client, can. Pipelined commands go through sendCommand one by one
 * too, so a pipeline of n commands counts n.
 */
import type Redis from 'ioredis';

export interface CommandCounter {
  /** Commands sent by the client since it was wrapped. */
  sent(): number;
}

export function countSentCommands(client: Redis): CommandCounter {
  let sent = 0;
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    sent++;
    return send(...args);
  }) as Redis['sendCommand'];
  return { sent: () => sent };
}
