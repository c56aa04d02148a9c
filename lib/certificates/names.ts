// The names in a PKCS#10 request: the subject's common name and organizations
// (the user and groups kube's x509 authenticator reads), and the subject
// alternative names of its extensionRequest attribute.
import { isIPv4 } from 'node:net';
import { bytesOf, children, decodeOid, readTlv, TAG, type Tlv } from './der.js';

const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  extensionRequest: '1.2.840.113549.1.9.14',
  subjectAltName: '2.5.29.17',
};

export interface RequestNames {
  readonly commonName: string;
  readonly organizations: readonly string[];
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
  readonly emailAddresses: readonly string[];
  readonly uris: readonly string[];
}

function readString(der: Buffer, t: Tlv): string {
  return bytesOf(der, t).toString(t.tag === TAG.UTF8_STRING ? 'utf8' : 'latin1');
}

export function readSubject(der: Buffer, name: Tlv): { commonName: string; organizations: string[] } {
  let commonName = '';
  const organizations: string[] = [];
  for (const rdn of children(der, name)) {
    for (const atv of children(der, rdn)) {
      const [type, value] = children(der, atv);
      if (!type || !value) continue;
      const o = decodeOid(der, type);
      if (o === OID.commonName) commonName = readString(der, value);
      else if (o === OID.organization) organizations.push(readString(der, value));
    }
  }
  return { commonName, organizations };
}

export function readSans(der: Buffer, attrs: Tlv | undefined): Pick<RequestNames, 'dnsNames' | 'ipAddresses' | 'emailAddresses' | 'uris'> {
  const out = { dnsNames: [] as string[], ipAddresses: [] as string[], emailAddresses: [] as string[], uris: [] as string[] };
  if (!attrs || attrs.tag !== 0xa0) return out;
  for (const attr of children(der, attrs)) {
    const [type, values] = children(der, attr);
    if (!type || !values || decodeOid(der, type) !== OID.extensionRequest) continue;
    for (const exts of children(der, values)) {
      for (const ext of children(der, exts)) {
        const fields = children(der, ext);
        if (decodeOid(der, fields[0]!) !== OID.subjectAltName) continue;
        const value = fields[fields.length - 1]!;
        const names = readTlv(der, value.body, value.end);
        for (const n of children(der, names)) {
          const v = bytesOf(der, n);
          if (n.tag === 0x81) out.emailAddresses.push(v.toString('latin1'));
          else if (n.tag === 0x82) out.dnsNames.push(v.toString('latin1'));
          else if (n.tag === 0x86) out.uris.push(v.toString('latin1'));
          else if (n.tag === 0x87) out.ipAddresses.push(ipText(v));
        }
      }
    }
  }
  return out;
}

function ipText(b: Buffer): string {
  if (b.length === 4) return [...b].join('.');
  const groups: string[] = [];
  for (let i = 0; i + 1 < b.length; i += 2) groups.push(b.readUInt16BE(i).toString(16));
  const text = groups.join(':');
  return isIPv4(text) ? text : new URL(`http://[${text}]/`).hostname.slice(1, -1);
}
