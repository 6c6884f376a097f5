export { requestId } from './request-id.ts';
export { BASE64_TEXT, INLINE_BYTES, MANAGEMENT_MAX_KEYS, MANAGEMENT_MAX_VALUES, MAX_DEPTH, MAX_VALUES, parseInTaskPool, parseJsonBody, parseManagementBody, parseManagementInTaskPool, pastLimits, restoreLifted, type ParsedBody, type ParsedInWorker, type ParsedManagementBody, type ParsedManagementInWorker } from './json-body.ts';
export { routeHost, type HostRoute } from './host-router.ts';
export { html, sendPage, escapeHtml, Html } from './html.ts';
export { installConnectionGuard, type ConnectionGuard, type ConnectionGuardOptions } from './connection-guard.ts';
export { countRefusals, type Refusal } from './refusal-counter.ts';
export { sseStream, sseFrame, prepend, SSE_HEADERS, type SseSource } from './sse.ts';
export { lazyCompilers, lazySerializerFactory } from './lazy-compilers.ts';
export { awaitRouteCompiles, compileAhead, type CompileAhead, type CompileStats } from './compile-ahead.ts';
