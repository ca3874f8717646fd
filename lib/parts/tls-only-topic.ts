import { AnyPrincipal, Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Topic, type TopicProps } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';

/**
 * A topic whose policy refuses every publish not made over TLS. The statement is written here rather than
 * by `enforceSSL`: aws-cdk-lib 2.176.0 (the floor of the peer range) adds that statement only when some
 * other statement creates the topic policy, so a topic with no other grant stayed open to plain HTTP.
 */
export function tlsOnlyTopic(scope: Construct, id: string, props: Omit<TopicProps, 'enforceSSL'>): Topic {
  const topic = new Topic(scope, id, props);
  topic.addToResourcePolicy(
    new PolicyStatement({
      sid: 'AllowPublishThroughSSLOnly',
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: { Bool: { 'aws:SecureTransport': 'false' } },
    }),
  );
  return topic;
}
