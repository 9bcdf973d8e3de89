// Types for provenance.mjs (used by the unit tests in src/).

/** What nvidia-smi says of the first GPU; null where it does not say (or cannot run, with `error`). */
export interface NvidiaSmiState {
  readonly device: string | null;
  readonly driver: string | null;
  readonly smClockMHz: number | null;
  readonly smClockMaxMHz: number | null;
  readonly powerLimitW: number | null;
  readonly error?: string;
}

/** The provenance fields every GPU-machine record carries. */
export interface RecordProvenance {
  readonly commit: string;
  readonly device: string;
  readonly date: string;
  readonly provenance: Omit<NvidiaSmiState, 'device'>;
}

export declare const NVIDIA_SMI_FIELDS: readonly (readonly [field: string, key: keyof NvidiaSmiState])[];
export declare function gitState(root: string): { commit: string; dirty: boolean } | undefined;
export declare function manifestCommit(manifestPath: string): string | undefined;
export declare function recordCommit(where: { manifestPath?: string; root?: string }): string;
export declare function parseNvidiaSmiLine(line: string): NvidiaSmiState;
export declare function queryNvidiaSmi(run?: (args: readonly string[]) => string): NvidiaSmiState;
export declare function recordProvenance(options?: {
  manifestPath?: string;
  root?: string;
  fallbackDevice?: string;
  now?: Date;
  smi?: () => NvidiaSmiState;
}): RecordProvenance;
