/**
 * The dependency check (`npm run depcheck`, run by CI): no import cycles, no deep imports across folders (a folder's
 * public surface is its index.ts, or index.mjs for code that worker threads load), and imports only downward:
 * (the CLI and the bench, being entry points, may arrange their own files freely), actors and store import nothing of ours, core mechanisms no feature, each runtime feature only the features below
 * it (DESIGN §3), runtime never the edge, the edge never the CLI. Tests may reach into internals; sources may not.
 */

/**
 * Runtime features, lowest first: each may import those before it, never those after. Approvals sit below agents:
 * the agent loop opens gates and asks the policies; gates and policies know nothing of agents.
 */
const FEATURES = ['identity', 'accounts', 'tools', 'plugins', 'builtins', 'connectors', 'models', 'skills', 'approvals', 'agents', 'workflows', 'schedules', 'push', 'gateways', 'viz', 'operator'];
const SOURCES = '^(actors|runtime|edge|store|bin|bench)/';

const layered = FEATURES.map((feature, i) => ({
  name: `feature-${feature}-imports-downward`,
  comment: `runtime/${feature} may import core and ${FEATURES.slice(0, i).join(', ') || 'no other feature'}`,
  severity: 'error',
  from: { path: `^runtime/${feature}/` },
  to: { path: `^runtime/(${[...FEATURES.slice(i + 1), 'index\\.ts$', 'compose\\.ts$'].join('|')})` },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Import cycles make the layering meaningless and start-up order fragile.',
      severity: 'error',
      from: { path: SOURCES },
      to: { circular: true },
    },
    {
      name: 'no-deep-import',
      comment: "Import another folder through its index.ts (or index.mjs for worker code), never a file inside it.",
      severity: 'error',
      from: { path: '^((?:actors|runtime|edge|store|bin|bench)/?.*)/[^/]+$' },
      to: { path: '^(actors|runtime|edge|store)/', pathNot: ['^$1/[^/]+$', '/index\\.(ts|mjs)$'] },
    },
    {
      name: 'actors-are-pure',
      comment: 'Statecharts import xstate and each other only: effects are implemented by the runtime.',
      severity: 'error',
      from: { path: '^actors/' },
      to: { path: '^(runtime|edge|store|bin|bench)/' },
    },
    {
      name: 'store-is-a-leaf',
      comment: 'Repositories own the SQL and know nothing of the runtime above them.',
      severity: 'error',
      from: { path: '^store/' },
      to: { path: '^(runtime|edge|bin|bench|actors)/' },
    },
    {
      name: 'core-knows-no-feature',
      comment: 'Mechanisms (runtime/core) serve every feature and depend on none.',
      severity: 'error',
      from: { path: '^runtime/core/' },
      to: { path: '^runtime/(?!core/)' },
    },
    {
      name: 'runtime-below-edge',
      severity: 'error',
      from: { path: '^runtime/' },
      to: { path: '^(edge|bin|bench)/' },
    },
    {
      name: 'edge-below-cli',
      severity: 'error',
      from: { path: '^edge/' },
      to: { path: '^(bin|bench)/' },
    },
    ...layered,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|scratch|tools/conformance)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.mjs', '.js'] },
  },
};
