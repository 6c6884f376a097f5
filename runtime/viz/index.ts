export { machineGraph, allStates, guardName, formatDelay, vizNodeId, type VizGraph, type VizState, type VizStateType, type VizTransition } from './graph.ts';
export { activeStateIds, describeValue } from './active.ts';
export { toDot, dotString, ACTIVE_FILL, ACTIVE_STROKE, type DotOptions } from './dot.ts';
export { toMermaid, type MermaidOptions } from './mermaid.ts';
export { renderSvg, inlineSvg, VizRenderError } from './svg.ts';
export { statechartKinds, isStatechartKind, statechartGraph, renderStatechart, vizFrame, VIZ_FORMATS, type VizFormat, type VizFrame } from './statecharts.ts';
