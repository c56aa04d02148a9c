// Redis commands as spans of their own (--tracing-config-file with the Redis
// store): each command a client sends under a recorded request is a CLIENT
// span `<COMMAND>` (OpenTelemetry's database conventions: `db.system=redis`,
// `db.operation`), a child of the store span that issued it (`Create redis`,
// …). Arguments are not recorded: they hold object contents.
//
// The command methods of the one client are wrapped, not ioredis's
// sendCommand: with auto-pipelining the commands of one event-loop turn are
// sent together later, so only the method call knows which store call asked.
// That call names itself for its synchronous part (TracedStore,
// `withCommandParent`): a command sent after the store method's first await
// (a Redis Cluster's domain lookup, a read waiting for a revision check shared
// with other requests) has no span. Applied only when the process traces; an
// unrecorded request pays one check per command.
import type { Redis } from 'ioredis';
import { commandSpan, SpanStatusCode, type Attributes, type Span } from '../../../lib/tracing/span.js';

type CommandMethod = (this: Redis, ...args: unknown[]) => unknown;

export function traceCommands(client: Redis, where: Attributes): void {
  for (const name of client.getBuiltinCommands()) {
    const method: unknown = (client as unknown as Record<string, unknown>)[name];
    if (typeof method !== 'function') continue;
    const operation = name.toUpperCase();
    const attributes: Attributes = { 'db.system': 'redis', 'db.operation': operation, ...where };
    // An own property of this client: the prototype, shared with untraced clients, stays as it is.
    Object.defineProperty(client, name, {
      configurable: true,
      writable: true,
      enumerable: false,
      value: function traced(this: Redis, ...args: unknown[]): unknown {
        const span = commandSpan(operation, attributes);
        const result = (method as CommandMethod).apply(this, args);
        if (span) settle(span, result);
        return result;
      },
    });
  }
}

function settle(span: Span, result: unknown): void {
  if (!(result instanceof Promise)) {
    span.end();
    return;
  }
  result.then(
    () => span.end(),
    (err: unknown) => {
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      span.end();
    },
  );
}
