// Shared by the apply tests: a server, and apply/get helpers speaking YAML-or-JSON apply bodies.
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server.js';

export const NS = '/api/v1/namespaces/default';
export const APPLY = { 'content-type': 'application/apply-patch+yaml' };

export function applier(s: () => TestServer) {
  return {
    apply(path: string, body: unknown, manager: string | undefined, extra = '') {
      const q = [manager === undefined ? '' : `fieldManager=${encodeURIComponent(manager)}`, extra].filter(Boolean).join('&');
      return s().admin.request('PATCH', `${path}${q ? `?${q}` : ''}`, body, APPLY);
    },
    async ok(path: string, body: unknown, manager: string, extra = '') {
      const r = await this.apply(path, body, manager, extra);
      assert.ok(r.status === 200 || r.status === 201, `${r.status} ${r.text}`);
      return r.json;
    },
    async get(path: string) {
      const r = await s().admin.request('GET', path);
      assert.equal(r.status, 200, r.text);
      return r.json;
    },
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function entry(obj: any, manager: string, operation = 'Apply'): any {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (obj.metadata.managedFields ?? []).find((e: any) => e.manager === manager && e.operation === operation);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function managers(obj: any): string[] {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (obj.metadata.managedFields ?? []).map((e: any) => `${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ''}`).sort();
}

export const cm = (name: string, data: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...extra },
  data,
});
