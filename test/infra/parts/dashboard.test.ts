import { Template } from 'aws-cdk-lib/assertions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../../adapters/powertools/observability';
import { METRIC, METRIC_DIMENSION, METRICS_NAMESPACE } from '../../../core/observability/observability';
import { UsageDashboard } from '../../../lib/parts/dashboard';
import { captureProcessOutput, type OutputCapture } from '../../reliability/support/capture';
import { partScope, searchesOf } from './fixtures';

/** The schema and metric name a SEARCH expression asks for: `{namespace,dimensions...}`, MetricName. */
function searchTarget(expression: string): { namespace: string; dimensions: string[]; metricName: string } {
  const match = /^SEARCH\('\{([^}]+)\} MetricName="([^"]+)"', 'Sum', 300\)$/.exec(expression);
  if (!match) throw new Error(`not a SEARCH over one metric name: ${expression}`);
  const [namespace, ...dimensions] = (match[1] as string).split(',');
  return { namespace: namespace as string, dimensions: dimensions.sort(), metricName: match[2] as string };
}

function dashboard(alerts: boolean): Template {
  const { stack, scope } = partScope();
  new UsageDashboard(scope, { alerts });
  return Template.fromStack(stack);
}

describe('UsageDashboard', () => {
  // Synthesized while the file is collected, as the other part tests do (the first synthesis is slow).
  const withAlerts = searchesOf(dashboard(true));
  const withoutAlerts = searchesOf(dashboard(false));

  it('graphs allowed, denied and alerts per platform metric, by SEARCH over the metric dimension', () => {
    const searches = Object.values(withAlerts).map(searchTarget);
    expect(searches).toEqual(
      [METRIC.allowed, METRIC.denied, METRIC.alertPublished].map((metricName) => ({
        namespace: METRICS_NAMESPACE,
        dimensions: [METRIC_DIMENSION, 'service'].sort(),
        metricName,
      })),
    );
  });

  it('leaves the alerts graph out when alerts are off', () => {
    const searches = Object.values(withoutAlerts).map(searchTarget);
    expect(searches.map((search) => search.metricName)).toEqual([METRIC.allowed, METRIC.denied]);
  });
});

describe('UsageDashboard against what the Lambdas emit', () => {
  const searches = Object.values(searchesOf(dashboard(true))).map(searchTarget);
  let capture: OutputCapture;
  beforeEach(() => {
    capture = captureProcessOutput();
  });
  afterEach(() => {
    capture.restore();
  });

  it('searches the namespace, dimension set and metric names of the EMF lines the counts are written in', () => {
    const metrics = createMetrics('access-authorizer');
    metrics.addCountPerMetric(METRIC.allowed, 'hits', 1);
    metrics.addCountPerMetric(METRIC.denied, 'hits', 1);
    metrics.addCountPerMetric(METRIC.alertPublished, 'hits', 1);
    metrics.publishStoredMetrics();
    const [line] = capture
      .text()
      .split('\n')
      .filter((text) => text.includes('"_aws"'))
      .map((text) => JSON.parse(text));
    const [emitted] = line._aws.CloudWatchMetrics;

    for (const search of searches) {
      expect(search.namespace).toBe(emitted.Namespace);
      expect(emitted.Dimensions).toContainEqual(expect.arrayContaining(search.dimensions));
      expect(
        emitted.Dimensions.find((set: string[]) => set.length === search.dimensions.length),
      ).toBeDefined();
      expect(emitted.Metrics.map((metric: { Name: string }) => metric.Name)).toContain(search.metricName);
    }
  });
});
