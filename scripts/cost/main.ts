/**
 * `npm run cost [-- <layout> ...]`: the fixed monthly cost of each layout (all by default), priced from
 * scripts/cost/price-list.json. Run it after changing the stack, and copy the figures into docs/costs.md.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { LAYOUTS, type LayoutName } from './layouts';
import { authorizerLogBytesPerCall, perMillionCalls } from './per-call';
import { priceTemplate } from './price';
import priceList from './price-list.json';

const money = (amount: number) => `${priceList.currency} ${amount.toFixed(2)}`;

const asked = process.argv.slice(2);
const unknown = asked.filter((name) => !(name in LAYOUTS));
if (unknown.length > 0) {
  console.error(`unknown layout ${unknown.join(', ')}: one of ${Object.keys(LAYOUTS).join(', ')}`);
  process.exit(2);
}
const names = (asked.length > 0 ? asked : Object.keys(LAYOUTS)) as LayoutName[];
console.log(`Fixed monthly cost, ${priceList.region} prices of ${priceList.date} (before traffic):`);
for (const name of names) {
  const layout = LAYOUTS[name];
  const { lines, total } = priceTemplate(Template.fromStack(layout.stack()).toJSON() as never);
  console.log(`\n${name}: ${money(total)} a month\n  ${layout.description}`);
  for (const line of lines)
    console.log(`  ${money(line.monthly).padStart(12)}  ${line.quantity} × ${line.item}`);
}

const logBytes = authorizerLogBytesPerCall();
console.log(
  `\nPer million calls, by use (the authorizer's logs: ${logBytes} bytes a call, Lambda's lines and its EMF):`,
);
for (const apiType of ['http', 'rest'] as const) {
  const cost = perMillionCalls(apiType, logBytes);
  console.log(
    `  ${apiType.toUpperCase().padEnd(4)} ${money(cost.total)}: API Gateway ${money(cost.api)}, Lambda requests ${money(cost.lambdaRequests)}, compute ${money(cost.lambdaCompute)}, logs ${money(cost.logs)}`,
  );
}
