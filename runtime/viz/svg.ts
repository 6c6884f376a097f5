import type { Viz } from '@viz-js/viz';

/**
 * DOT to SVG with Graphviz compiled to WebAssembly: no network, no native binary. The module is loaded and
 * instantiated once per process, on the first render (about 100 ms; the package is a megabyte of JavaScript that a
 * node would otherwise parse at every start); a render then takes tens of milliseconds.
 */
let viz: Promise<Viz> | undefined;

export class VizRenderError extends Error {
  override readonly name = 'VizRenderError';
}

export async function renderSvg(dot: string): Promise<string> {
  viz ??= import('@viz-js/viz').then((m) => m.instance());
  const result = (await viz).render(dot, { format: 'svg' });
  if (result.status !== 'success') {
    throw new VizRenderError(`graphviz could not render the chart: ${result.errors.map((e) => e.message).join('; ')}`);
  }
  return result.output;
}

/** The `<svg>` element alone, without the XML declaration and doctype, for inlining into an HTML page. */
export function inlineSvg(svg: string): string {
  const start = svg.indexOf('<svg');
  return start >= 0 ? svg.slice(start) : svg;
}
