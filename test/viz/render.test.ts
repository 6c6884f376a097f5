import { describe, expect, it } from 'vitest';
import { and, createMachine, not, setup } from 'xstate';
import { accountMachine, deviceSessionMachine } from '../../actors/index.ts';
import {
  ACTIVE_FILL,
  activeStateIds,
  allStates,
  describeValue,
  machineGraph,
  renderStatechart,
  renderSvg,
  statechartKinds,
  toDot,
  toMermaid,
  vizNodeId,
} from '../../runtime/index.ts';

const DEVICE_STATES = ['DeviceSession', 'DeviceSession.pending', 'DeviceSession.approved', 'DeviceSession.denied', 'DeviceSession.consumed', 'DeviceSession.denialReported', 'DeviceSession.expired'];
const ACCOUNT_STATES = [
  'Account',
  'Account.status',
  'Account.status.active',
  'Account.status.suspended',
  'Account.budget',
  'Account.budget.init',
  'Account.budget.none',
  'Account.budget.funded',
  'Account.budget.exhausted',
  'Account.budget.unknown',
];

/** The DOT statement that declares one node (`"id" [...]`), or the `graph [...]` line of one cluster. */
const nodeLine = (dot: string, stateId: string) => dot.split('\n').find((l) => l.trim().startsWith(`"${vizNodeId(stateId)}" [`)) ?? '';
const clusterLine = (dot: string, stateId: string) => {
  const lines = dot.split('\n');
  const i = lines.findIndex((l) => l.trim() === `subgraph "cluster_${vizNodeId(stateId)}" {`);
  return i < 0 ? '' : lines[i + 1]!;
};

describe('statechart walk', () => {
  it('lists the machines by actor kind', () => {
    expect(statechartKinds()).toEqual(['device-session', 'account', 'plugin-version', 'gateway', 'agent-task', 'approval-gate', 'workflow-run', 'plugin-build', 'schedule']);
  });

  it('finds every state of both machines, with its kind', () => {
    expect(allStates(machineGraph(deviceSessionMachine)).map((s) => s.id)).toEqual(DEVICE_STATES);
    expect(allStates(machineGraph(accountMachine)).map((s) => s.id)).toEqual(ACCOUNT_STATES);
    const types = Object.fromEntries(allStates(machineGraph(accountMachine)).map((s) => [s.id, s.type]));
    expect(types).toMatchObject({ Account: 'parallel', 'Account.status': 'compound', 'Account.budget.funded': 'atomic' });
    const finals = allStates(machineGraph(deviceSessionMachine)).filter((s) => s.type === 'final').map((s) => s.key);
    expect(finals).toEqual(['consumed', 'denialReported', 'expired']);
  });

  it('labels guarded, eventless and delayed transitions, whatever form the guard takes', () => {
    const machine = setup({ guards: { ready: () => true, big: () => true } }).createMachine({
      id: 'demo',
      initial: 'a',
      states: {
        a: {
          after: { 1500: 'b', 3000: { target: 'c', guard: 'ready' } },
          on: {
            GO: { target: 'b', guard: { type: 'big', params: { min: 3 } } },
            BOTH: { target: 'c', guard: and(['ready', not('big')]) },
          },
        },
        b: { always: { target: 'c', guard: ({ context }) => context === undefined } },
        c: { type: 'final' },
      },
    });
    const labels = machineGraph(machine).transitions.map((t) => `${t.source} -> ${t.target}: ${t.label} (${t.kind})`);
    expect(labels).toEqual([
      'demo.a -> demo.b: GO [big] (event)',
      'demo.a -> demo.c: BOTH [(ready && !big)] (event)',
      'demo.a -> demo.b: after 1500 ms (after)',
      'demo.a -> demo.c: after 3 s [ready] (after)',
      'demo.b -> demo.c: always [inline guard] (always)',
    ]);
  });
});

describe('DOT', () => {
  const deviceDot = toDot(machineGraph(deviceSessionMachine));
  const accountDot = toDot(machineGraph(accountMachine));

  it('declares every state with a stable id derived from its state id', () => {
    for (const id of DEVICE_STATES.slice(1)) expect(nodeLine(deviceDot, id)).toContain(`id="state-${id}"`);
    for (const id of ['Account.status.active', 'Account.status.suspended', 'Account.budget.init', 'Account.budget.none', 'Account.budget.funded', 'Account.budget.exhausted', 'Account.budget.unknown']) {
      expect(nodeLine(accountDot, id)).toContain(`id="state-${id}"`);
    }
    expect(vizNodeId('a b"c')).toBe('state-a%20b%22c');
  });

  it('draws compound and parallel states as clusters, parallel regions dashed', () => {
    expect(clusterLine(deviceDot, 'DeviceSession')).toContain('class="state compound"');
    expect(clusterLine(accountDot, 'Account')).toContain('class="state parallel"');
    expect(clusterLine(accountDot, 'Account')).toContain('<I>parallel</I>');
    for (const region of ['Account.status', 'Account.budget']) {
      expect(clusterLine(accountDot, region)).toContain('class="state compound region"');
      expect(clusterLine(accountDot, region)).toContain('style="dashed,rounded"');
    }
    expect(accountDot).toContain('compound="true"');
  });

  it('marks initial states, styles final states and labels edges with events and guards', () => {
    expect(deviceDot).toContain('"initial-state-DeviceSession" -> "state-DeviceSession.pending"');
    expect(accountDot).toContain('"initial-state-Account.status" -> "state-Account.status.active"');
    expect(accountDot).toContain('"initial-state-Account.budget" -> "state-Account.budget.init"');
    expect(accountDot).not.toContain('"initial-state-Account"');
    for (const f of ['consumed', 'denialReported', 'expired']) {
      expect(nodeLine(deviceDot, `DeviceSession.${f}`)).toMatch(/class="state final".*peripheries=2/);
    }
    expect(deviceDot).toContain('"state-DeviceSession.approved" -> "state-DeviceSession.consumed" [id="transition-3", class="transition event", label="REDEEM [sameClient]"]');
    expect(deviceDot).toMatch(/"state-DeviceSession.pending" -> "state-DeviceSession.approved" \[[^\]]*label="APPROVE"/);
    expect(accountDot).toMatch(/"state-Account.budget.init" -> "state-Account.budget.funded" \[[^\]]*label="always \[initiallyFunded\]", style="dashed"/);
    expect(accountDot).toMatch(/"state-Account.budget.funded" -> "state-Account.budget.exhausted" \[[^\]]*label="DEBIT \[drainsBudget\]"/);
    // A compound state's own transition into its substates starts at the cluster's anchor.
    expect(accountDot).toMatch(/"anchor-state-Account.budget" -> "state-Account.budget.funded" \[[^\]]*label="BUDGET_SET \[positiveBudget\]"/);
    // Targetless transitions stay inside their state's label.
    expect(nodeLine(accountDot, 'Account.budget.funded')).toContain('DEBIT [affordable]<BR/>DEBIT');
  });

  it('marks the active states', () => {
    const dot = toDot(machineGraph(accountMachine), { active: activeStateIds(machineGraph(accountMachine), { status: 'suspended', budget: 'funded' }) });
    expect(nodeLine(dot, 'Account.status.suspended')).toContain('class="state atomic active"');
    expect(nodeLine(dot, 'Account.status.suspended')).toContain(`fillcolor="${ACTIVE_FILL}"`);
    expect(nodeLine(dot, 'Account.status.active')).toContain('class="state atomic"');
    expect(nodeLine(dot, 'Account.status.active')).toContain('fillcolor="white"');
    expect(clusterLine(dot, 'Account.status')).toContain('active');
  });
});

describe('active state ids', () => {
  it('are the root, the regions and the named states with their ancestors', () => {
    expect(activeStateIds(machineGraph(accountMachine), { status: 'suspended', budget: 'funded' })).toEqual([
      'Account',
      'Account.status',
      'Account.status.suspended',
      'Account.budget',
      'Account.budget.funded',
    ]);
    expect(activeStateIds(machineGraph(deviceSessionMachine), 'pending')).toEqual(['DeviceSession', 'DeviceSession.pending']);
    expect(activeStateIds(machineGraph(deviceSessionMachine), 'no-such-state')).toEqual(['DeviceSession']);
  });

  it('agree with the nodes XState itself resolves for the same value', () => {
    for (const [machine, value] of [
      [accountMachine, { status: 'active', budget: 'exhausted' }],
      [deviceSessionMachine, 'denied'],
    ] as const) {
      const resolved = machine.resolveState({ value, context: {} as never });
      expect(activeStateIds(machineGraph(machine), value).sort()).toEqual(resolved._nodes.map((n) => n.id).sort());
    }
  });

  it('describe a value in one line', () => {
    expect(describeValue({ status: 'suspended', budget: 'funded' })).toBe('status.suspended, budget.funded');
    expect(describeValue('pending')).toBe('pending');
  });
});

describe('Mermaid', () => {
  const device = toMermaid(machineGraph(deviceSessionMachine));
  const account = toMermaid(machineGraph(accountMachine), { active: activeStateIds(machineGraph(accountMachine), { status: 'suspended', budget: 'funded' }) });

  it('writes a stateDiagram-v2 with every state, composites and parallel regions', () => {
    expect(device.startsWith('stateDiagram-v2\n')).toBe(true);
    for (const key of ['pending', 'approved', 'denied', 'consumed', 'denialReported', 'expired']) expect(device).toContain(`state "${key}" as DeviceSession__${key}\n`);
    expect(device).toContain('state "DeviceSession" as DeviceSession {');
    expect(account).toContain('state "Account (parallel)" as Account {');
    for (const path of ['status', 'status__active', 'status__suspended', 'budget', 'budget__init', 'budget__none', 'budget__funded', 'budget__exhausted', 'budget__unknown']) {
      expect(account).toMatch(new RegExp(`state "[a-z]+" as Account__${path}( \\{)?\\n`));
    }
    // The two regions are separated by Mermaid's concurrency divider.
    expect(account).toMatch(/ {4}\}\n {4}--\n {4}state "budget" as Account__budget \{/);
  });

  it('marks initial and final states, labels guards and highlights the active leaves', () => {
    expect(device).toContain('[*] --> DeviceSession__pending');
    expect(device).toContain('DeviceSession__consumed --> [*]');
    expect(device).toContain('DeviceSession__approved --> DeviceSession__consumed : REDEEM [sameClient]');
    expect(device).toContain('DeviceSession__pending : REDEEM [sameClient]');
    expect(account).toContain('Account__budget__init --> Account__budget__funded : always [initiallyFunded]');
    expect(account).toContain('Account__budget__any --> Account__budget__funded : BUDGET_SET [positiveBudget]');
    expect(account).toContain('class Account__status__suspended,Account__budget__funded active');
  });
});

describe('SVG', () => {
  it('renders DOT to an SVG whose elements carry the state ids and the active class', async () => {
    const svg = await renderSvg(toDot(machineGraph(accountMachine), { active: ['Account.status.suspended'] }));
    expect(svg).toContain('<svg');
    // Graphviz writes "-" in ids as a character reference; the DOM reads it back as "state-Account.status.suspended".
    expect(svg).toMatch(/<g id="state&#45;Account\.status\.suspended" class="node state atomic active"/);
    expect(svg).toMatch(/<g id="state&#45;Account\.status\.active" class="node state atomic"/);
  });

  it('renders every machine in every format, and nothing for an unknown kind', async () => {
    for (const kind of statechartKinds()) {
      expect(await renderStatechart(kind, 'svg')).toContain('<svg');
      expect(await renderStatechart(kind, 'dot')).toMatch(/^digraph /);
      expect(await renderStatechart(kind, 'mermaid')).toMatch(/^stateDiagram-v2\n/);
    }
    expect(await renderStatechart('nope', 'svg')).toBeNull();
  });

  it('lays out nesting, history, parallel regions and edges into and out of clusters without a Graphviz warning', async () => {
    const machine = createMachine({
      id: 'rich',
      initial: 'idle',
      states: {
        idle: { on: { START: 'running', RESTORE: 'running.hist' } },
        running: {
          initial: 'work',
          on: { STOP: 'idle', RESET: { target: 'running', reenter: true }, JUMP: '.work.deep' },
          states: {
            work: { initial: 'shallow', states: { shallow: { on: { DIVE: 'deep' } }, deep: {} }, on: { PAUSE: '#rich.running.paused' } },
            paused: { after: { 500: 'work' } },
            hist: { type: 'history', history: 'deep' },
          },
        },
        both: { type: 'parallel', states: { left: { initial: 'l1', states: { l1: { on: { X: '#rich.both.right.r2' } } } }, right: { initial: 'r1', states: { r1: {}, r2: {} } } } },
        done: { type: 'final' },
      },
    });
    const graph = machineGraph(machine);
    const dot = toDot(graph, { active: activeStateIds(graph, { running: { work: 'deep' } }) });
    const viz = await (await import('@viz-js/viz')).instance();
    const result = viz.render(dot, { format: 'svg' });
    expect(result.errors).toEqual([]);
    expect(result.status).toBe('success');
    expect(dot).toMatch(/"state-rich.idle" -> "anchor-state-rich.running" \[[^\]]*label="START", lhead="cluster_state-rich.running"/);
    expect(dot).toMatch(/"anchor-state-rich.running" -> "state-rich.idle" \[[^\]]*label="STOP", ltail="cluster_state-rich.running"/);
    expect(dot).toMatch(/"state-rich.idle" -> "state-rich.running.hist" \[[^\]]*label="RESTORE"/);
    expect(nodeLine(dot, 'rich.running.hist')).toContain('label="H*"');
    expect(nodeLine(dot, 'rich.running.work.deep')).toContain('class="state atomic active"');
    expect(clusterLine(dot, 'rich.running.work')).toContain('class="state compound active"');
    expect(dot).toMatch(/label="after 500 ms", [^\]]*style="dotted"/);
    expect(toMermaid(graph)).toContain('state "H*" as rich__running__hist');
  });

  it('survives state names DOT and HTML would interpret', async () => {
    const machine = createMachine({ id: 'odd "machine"', initial: 'a<b>', states: { 'a<b>': { on: { 'GO "now"': 'c&d' } }, 'c&d': { on: { BACK: { target: 'a<b>', guard: 'x\\y' } } } } } as never);
    const dot = toDot(machineGraph(machine));
    const svg = await renderSvg(dot);
    expect(svg).toContain('a&lt;b&gt;');
    expect(svg).toContain('GO &quot;now&quot;');
    expect(svg).toContain('id="state&#45;odd%20%22machine%22.c%26d"');
    expect(svg).toContain('BACK [x\\y]');
  });
});
