import { tilekitProject } from '../../vitest.shared.ts';

export default tilekitProject(import.meta.dirname);
