import { fileURLToPath } from 'node:url';

/** The demo agent's rules, shipped with the platform (demo-rules.yaml beside this file). */
export const DEMO_RULES_FILE = fileURLToPath(new URL('./demo-rules.yaml', import.meta.url));
/** The `name` in demo-rules.yaml (a test holds the two together): the node serves `scripted/demo` before reading it. */
export const DEMO_RULES_NAME = 'demo';
