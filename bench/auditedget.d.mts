import type { IncomingMessage } from 'node:http';
export const URL: string;
export const UA: string;
export function fresh(s: string): string;
export function auditedGet(): { req: IncomingMessage; user: { username: string; groups: string[] }; renew(): void };
