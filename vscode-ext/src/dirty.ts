// Which editor buffers have unsaved edits, as the extension last told the panel: the flag a
// view's `editorDirty` reflects. A buffer going dirty or clean changes no file on disk, so no
// `fresh/didInvalidate` arrives and the status poll's fingerprint stays the same; the
// extension refreshes the folder itself when a flag flips (typing in an already dirty buffer
// refreshes nothing). Pure: no `vscode` import.

export class DirtyBuffers {
  private readonly dirty = new Set<string>();

  /** Records the buffer's state; true when it flipped (the folder's rows need a refresh). */
  update(uri: string, isDirty: boolean): boolean {
    if (isDirty === this.dirty.has(uri)) return false;
    if (isDirty) this.dirty.add(uri);
    else this.dirty.delete(uri);
    return true;
  }
}
