import type { Scenario } from '../scenario.ts';
import { actorAsk } from './actor-ask.ts';
import { actorWrite } from './actor-write.ts';
import { clusterScale } from './cluster-scale.ts';
import { noisyNeighbor } from './noisy-neighbor.ts';
import { sandboxCall } from './sandbox-call.ts';
import { mcpCall } from './mcp-call.ts';
import { hostileUpload } from './hostile-upload.ts';
import { a2aSend } from './a2a-send.ts';
import { pushFanout } from './push-fanout.ts';
import { builtinCall } from './builtin-call.ts';
import { embeddedStart } from './embedded-start.ts';
import { cliStart } from './cli-start.ts';

export const SCENARIOS: readonly Scenario[] = [actorAsk, actorWrite, clusterScale, sandboxCall, noisyNeighbor, mcpCall, hostileUpload, a2aSend, pushFanout, builtinCall, embeddedStart, cliStart];
