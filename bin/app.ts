#!/usr/bin/env node
import { App } from 'aws-cdk-lib';
import { accessStackPropsFromContext } from '../lib/access-context';
import { AccessManagementStack } from '../lib/access-stack';

const app = new App();
new AccessManagementStack(app, 'ApiAccessManagement', accessStackPropsFromContext(app));
