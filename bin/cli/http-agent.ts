import { Agent, type Dispatcher } from 'undici';
import { localhostAwareLookup } from './http.ts';

/** undici's agent for the commands that stream, download or upload, resolving `*.localhost` to loopback as http.ts does. */
export const cliAgent: Dispatcher = new Agent({ connect: { lookup: localhostAwareLookup as never } });
