import type { LanguageModelV3Message } from '@ai-sdk/provider';
import type { ThreadRecord } from '../../store/index.ts';

/** What a thread holds besides A2A messages: a model turn's tool calls, and the results of a round of calls. */
export interface ToolCallsBody {
  calls: { id: string; name: string; args: unknown }[];
  /** Text the model wrote beside its calls ("let me look that up"). */
  text?: string;
}
export interface ToolResultsBody {
  results: { id: string; name: string; isError: boolean; output: string }[];
}

/** An A2A part as the thread keeps it. */
interface StoredPart {
  text?: string;
  data?: unknown;
  raw?: string;
  url?: string;
  filename?: string;
  mediaType?: string;
  metadata?: Record<string, unknown>;
}

/** How much of a thread the model reads: its last records (older ones fall out of the window). */
export const HISTORY_WINDOW = 200;

/** The text the model reads for one message: text parts as they are, data as JSON, attachments named. */
export function partsText(parts: readonly StoredPart[]): string {
  return parts
    .map((p) => {
      if (typeof p.text === 'string') return p.text;
      const stored = (p.data as { attachment?: { size: number } } | undefined)?.attachment ?? (p.metadata?.attachment as { size: number } | undefined);
      if (p.data !== undefined && !stored) return JSON.stringify(p.data);
      const size = stored ? `, ${stored.size} bytes` : '';
      return `[attachment ${p.filename ?? (p.url ? p.url : 'unnamed')} (${p.mediaType ?? 'application/octet-stream'}${size})]`;
    })
    .join('\n');
}

/**
 * A thread's records as the language model's prompt messages (the system prompt is the turn's). The window starts at a message, never at a tool round cut off from
 * the call that asked for it (providers refuse a tool result without its call).
 */
export function modelMessages(records: readonly ThreadRecord[]): LanguageModelV3Message[] {
  let start = 0;
  while (start < records.length && records[start]!.kind !== 'user') start++;
  const out: LanguageModelV3Message[] = [];
  for (const r of records.slice(start)) {
    if (r.kind === 'user') out.push({ role: 'user', content: [{ type: 'text', text: partsText((r.body as { parts: StoredPart[] }).parts) }] });
    else if (r.kind === 'agent') out.push({ role: 'assistant', content: [{ type: 'text', text: partsText((r.body as { parts: StoredPart[] }).parts) }] });
    else if (r.kind === 'tool_calls') {
      const b = r.body as ToolCallsBody;
      out.push({
        role: 'assistant',
        content: [
          ...(b.text ? [{ type: 'text' as const, text: b.text }] : []),
          ...b.calls.map((c) => ({ type: 'tool-call' as const, toolCallId: c.id, toolName: c.name, input: c.args })),
        ],
      });
    } else {
      const b = r.body as ToolResultsBody;
      out.push({
        role: 'tool',
        content: b.results.map((x) => ({
          type: 'tool-result' as const,
          toolCallId: x.id,
          toolName: x.name,
          output: x.isError ? { type: 'error-text' as const, value: x.output } : { type: 'text' as const, value: x.output },
        })),
      });
    }
  }
  return out;
}
