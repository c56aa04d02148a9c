// The folder READMEs the documentation tests hold to the code: every README.md
// under the folders whose .ts files make up Gatehouse, and which of those files
// each README speaks for (its folder's, recursively, minus subfolders that have
// a README of their own).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../..', import.meta.url));

// test/ and k8s/ are left out: tests are not layered, and k8s/ holds manifests (and k8s/monitoring the script that generates its files).
export const SCOPE = ['gateway', 'lib', 'backends', 'certs', 'bench', 'policies'];

export interface FolderReadme {
  folder: string; // repository path, '/'-separated
  text: string;
  files: string[]; // repository paths of the .ts files it speaks for
}

function walk(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((entry) => {
    const path = posix.join(dir, entry);
    return statSync(join(root, path)).isDirectory() ? walk(path) : [path];
  });
}

export function isDirectory(path: string): boolean {
  try {
    return statSync(join(root, path)).isDirectory();
  } catch {
    return false;
  }
}

export function folderReadmes(): FolderReadme[] {
  const all = SCOPE.flatMap(walk);
  const folders = new Set(all.filter((f) => posix.basename(f) === 'README.md').map((f) => posix.dirname(f)));
  const owner = (dir: string): string | undefined => {
    for (let d = dir; d !== '.'; d = posix.dirname(d)) if (folders.has(d)) return d;
    return undefined;
  };
  return [...folders].sort().map((folder) => ({
    folder,
    text: readFileSync(join(root, folder, 'README.md'), 'utf8'),
    files: all.filter((f) => f.endsWith('.ts') && owner(posix.dirname(f)) === folder),
  }));
}

// The README folder that speaks for a repository directory (nearest ancestor with a README).
export function readmeOwner(readmes: FolderReadme[], dir: string): string | undefined {
  const folders = new Set(readmes.map((r) => r.folder));
  for (let d = dir; d !== '.' && d !== ''; d = posix.dirname(d)) if (folders.has(d)) return d;
  return undefined;
}
