/**
 * One authorizer instance in a process of its own: the bundled authorizer (its path the first argument),
 * configured by its environment as a Lambda is, on its own Redis connection. The parent sends
 * `{ id, event }` over IPC and gets `{ id, effect }` back: the policy's Allow or Deny (`Allow (platform)`
 * when the authorizer decided through the platform, unthrottled), or `error: ...`.
 */
const { handler } = require(process.argv[2]);

process.on('message', async ({ id, event }) => {
  let effect;
  try {
    const policy = await handler(event);
    // An Allow without the throttle's context came from the platform: Redis did not answer in time.
    const fromCache =
      policy.context?.throttleLimit !== undefined || policy.context?.reason === 'rate_limited';
    effect = `${policy.policyDocument.Statement[0].Effect}${fromCache ? '' : ' (platform)'}`;
  } catch (error) {
    effect = `error: ${error.message}`;
  }
  process.send({ id, effect });
});
process.send({ ready: true });
