/**
 * `npm run cost [-- <layout> ...]`: the fixed monthly cost of each layout (all by default), priced from
 * scripts/cost/price-list.json, then the cost per million calls on each API type with the CloudWatch Logs
 * the authorizer writes, as before and now. Run it after changing the stack, and copy the figures into
 * docs/costs.md and docs/http-api.md.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { LAYOUTS, type LayoutName } from './layouts';
import { type ApiType, type Logging, perMillionCalls } from './per-call';
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

console.log(`\nPer million calls (API Gateway, the authorizer Lambda, its CloudWatch Logs):`);
for (const apiType of ['http', 'rest'] as ApiType[]) {
  for (const logging of ['before', 'now'] as Logging[]) {
    const cost = perMillionCalls(priceList, apiType, logging);
    console.log(
      `  ${apiType.toUpperCase().padEnd(4)} logs ${logging.padEnd(6)} ${money(cost.total)}  (gateway ${money(cost.gateway)}, ` +
        `invocations ${money(cost.invocations)}, compute ${cost.compute.toFixed(3)}, logs ${cost.logs.toFixed(3)})`,
    );
  }
}
