// TypeDoc plugin for tilekit's API reference (loaded by ../../typedoc.json). Two jobs:
//
// 1. Modules named after packages. Each entry point (libs/*/src/index.ts, kernels/*/src/index.ts)
//    becomes a module named after its package (the "name" of the nearest package.json above the
//    barrel, e.g. @tilekit/layout), with the package's "description" as the module summary and its
//    README.md, when it has one, as the text of the module page. Without this TypeDoc names the
//    modules by path (libs/layout/src) and shows nothing above their member lists.
//
// 2. The "not exported" check, per package. TypeDoc's own check (validation.notExported) only
//    looks at types of the root package ("tilekit", which has no sources) and silently accepts
//    every type of another package, so it never fires here; typedoc.json turns it off. This plugin
//    does the same check for every @tilekit/* package: a type that the documented API refers to
//    but that no barrel exports (so the reference cannot link anywhere) is a warning, which
//    `npm run docs` (--treatWarningsAsErrors) turns into a failure. Entries of the
//    intentionallyNotExported option ("<package>/<path under it>:<Name>", or just "<Name>") are
//    accepted; an entry that matches nothing is a warning too, so the list only shrinks.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  Application,
  Comment,
  ContainerReflection,
  Converter,
  DeclarationReflection,
  makeRecursiveVisitor,
  MinimalSourceFile,
  ParameterReflection,
  ReflectionKind,
  SignatureReflection,
  TypeParameterReflection,
} from 'typedoc';

const SCOPE = '@tilekit/';

/** The nearest package.json at or above `dir`, parsed, with its folder; undefined when none. */
function packageAbove(dir) {
  for (let at = dir; ; at = dirname(at)) {
    const file = join(at, 'package.json');
    if (existsSync(file)) return { dir: at, json: JSON.parse(readFileSync(file, 'utf8')) };
    if (dirname(at) === at) return undefined;
  }
}

/** Names the module of an entry point after its package; adds the description and README. */
function describeModule(context, reflection) {
  if (!reflection.kindOf(ReflectionKind.Module)) return;
  const file = context.getSymbolFromReflection(reflection)?.declarations?.[0]?.getSourceFile().fileName;
  if (file === undefined) return;
  const pkg = packageAbove(dirname(file));
  if (typeof pkg?.json.name !== 'string') return;
  reflection.name = pkg.json.name;
  if (!reflection.comment && typeof pkg.json.description === 'string') {
    reflection.comment = new Comment([{ kind: 'text', text: pkg.json.description }]);
  }
  const readme = join(pkg.dir, 'README.md');
  if (existsSync(readme)) {
    const source = new MinimalSourceFile(readFileSync(readme, 'utf8').replaceAll('\r\n', '\n'), readme);
    reflection.readme = context.converter.parseRawComment(source, context.project.files).content;
  }
}

/**
 * Every reference type of the documented API, with the reflection that holds it: the walk of
 * TypeDoc's own export validation (types of declarations, signatures, parameters and type
 * parameters; not inherited or extended types).
 */
function referenceTypes(project) {
  const found = [];
  const queue = [project];
  let owner = project;
  const visitor = makeRecursiveVisitor({
    reference(type) {
      found.push({ type, owner });
    },
    reflection(type) {
      queue.push(type.declaration);
    },
  });
  const add = (items) => {
    if (items === undefined) return;
    if (Array.isArray(items)) queue.push(...items);
    else queue.push(items);
  };
  while (queue.length > 0) {
    owner = queue.shift();
    if (owner instanceof ContainerReflection) add(owner.children);
    if (owner instanceof DeclarationReflection) {
      owner.type?.visit(visitor);
      add(owner.typeParameters);
      add(owner.signatures);
      add(owner.indexSignatures);
      add(owner.getSignature);
      add(owner.setSignature);
      owner.overwrites?.visit(visitor);
      owner.implementedTypes?.forEach((t) => t.visit(visitor));
    }
    if (owner instanceof SignatureReflection) {
      add(owner.parameters);
      add(owner.typeParameters);
      owner.type?.visit(visitor);
      owner.overwrites?.visit(visitor);
    }
    if (owner instanceof ParameterReflection) owner.type?.visit(visitor);
    if (owner instanceof TypeParameterReflection) {
      owner.type?.visit(visitor);
      owner.default?.visit(visitor);
    }
  }
  return found;
}

/** Warns about @tilekit/* types the API refers to that no barrel exports (see the header). */
function checkExports(app, project) {
  const allowed = app.options.getValue('intentionallyNotExported').map((entry) => {
    const colon = entry.lastIndexOf(':');
    return colon < 0 ? { file: '', name: entry } : { file: entry.slice(0, colon), name: entry.slice(colon + 1) };
  });
  const used = new Set();
  const warned = new Set();
  for (const { type, owner } of referenceTypes(project)) {
    if (type.reflection || type.externalUrl || type.isIntentionallyBroken() || !type.symbolId) continue;
    if (!(type.package ?? '').startsWith(SCOPE) || project.symbolIdHasBeenRemoved(type.symbolId)) continue;
    const where = `${type.symbolId.packageName}/${type.symbolId.packagePath}`;
    const key = `${where}:${type.qualifiedName}`;
    const match = allowed.findIndex((a) => a.name === type.qualifiedName && where.endsWith(a.file));
    if (match >= 0) {
      used.add(match);
      continue;
    }
    if (warned.has(key)) continue;
    warned.add(key);
    app.logger.warn(
      `${type.qualifiedName}, defined in ${where}, is referenced by ${owner.getFriendlyFullName()} but not exported by its ` +
        `package's barrel: export it from src/index.ts, or add "${key}" to intentionallyNotExported in typedoc.json`,
    );
  }
  const unused = allowed.filter((_, i) => !used.has(i)).map((a) => (a.file ? `${a.file}:${a.name}` : a.name));
  if (unused.length > 0) {
    app.logger.warn(
      `intentionallyNotExported in typedoc.json lists entries that no longer match anything; remove them:\n\t${unused.join('\n\t')}`,
    );
  }
}

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_CREATE_DECLARATION, describeModule);
  app.on(Application.EVENT_VALIDATE_PROJECT, (project) => checkExports(app, project));
}
