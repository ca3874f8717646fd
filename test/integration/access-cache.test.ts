import { describeOnTopologies, REAL_REDIS_TOPOLOGIES } from '../support/redis-topology';
import { describeAccessCache } from '../unit/core/cache-suite';

describeOnTopologies(REAL_REDIS_TOPOLOGIES, describeAccessCache);
