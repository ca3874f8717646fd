/**
 * One authorizer instance in a process of its own: the bundled authorizer (its path the first argument),
 * configured by its environment as a Lambda is, on its own Redis connection. The parent sends
 * `{ id, event }` over IPC and gets `{ id, effect }` back: the policy's Allow or Deny, or `error: ...`.
 */
const { handler } = require(process.argv[2]);

process.on('message', async ({ id, event }) => {
  let effect;
  try {
    effect = (await handler(event)).policyDocument.Statement[0].Effect;
  } catch (error) {
    effect = `error: ${error.message}`;
  }
  process.send({ id, effect });
});
process.send({ ready: true });
