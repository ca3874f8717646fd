/** Writes the plugin's answer on a Node response (Express, Connect, Node's own http server). */
import type { ServerResponse } from 'node:http';
import type { AccessAnswer } from '../answers';

export function sendAnswer(res: ServerResponse, answer: AccessAnswer): void {
  res.statusCode = answer.status;
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  res.end(answer.body);
}
