import { describeOnTopologies, REAL_REDIS_TOPOLOGIES } from '../support/redis-topology';
import { describeThrottles } from '../unit/core/throttle-suite';

describeOnTopologies(REAL_REDIS_TOPOLOGIES, describeThrottles);
