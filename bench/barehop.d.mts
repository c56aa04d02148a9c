export interface BareHopBackend {
  port: number | string;
  ca: string;
  cert: string;
  key: string;
  servername: string;
}
export function startBareUndiciHop(o: { port?: number; cert: string; key: string; backend: BareHopBackend; addHeaders?: string[] }): Promise<number>;
export function startBareH2Hop(o: { port?: number; cert: string; key: string; backend: BareHopBackend; addHeaders?: string[] }): Promise<number>;
