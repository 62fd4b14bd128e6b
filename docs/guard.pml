/* The write guard of `fresh-ls mcp` as a Promela model, checked with spin
 * (tests/model/test_spin.py; docs/reliability.md, "The protocol as a model").
 *
 * A file of NR regions (functions), each at a version; NS agent sessions that read regions
 * and edit them through the MCP `edit` tool; an outside writer (a formatter, git) that
 * writes whenever it likes. An edit, as fresh_ls/mcp/server.py does it: take the file's
 * lock; load the file; `fresh/checkEdit` (the server reads the disk: allow only when the
 * session knows the region's current version, else deny and show it, which the session
 * then knows); read the file again just before the replace and give up when it changed;
 * replace; report the write (the session knows what it wrote).
 *
 * Property (the asserts at the replace): no write loses an update. Everything on disk is
 * still what the new content was computed from, and the region replaced is the version
 * the session knew.
 *
 * The one assumption: the outside writer does not write between the second read and the
 * replace (`window`). That gap is the microseconds docs/guard.md names as not excluded.
 *
 * Mutants (spin -DNAME), each of which spin must find a violation for:
 *   NOGUARD   the check always allows
 *   NOREREAD  no second read before the replace
 *   NOLOCK    no per-file lock: two agents' edits interleave
 */

#define NS 2
#define NR 2
#ifndef MAXV
#define MAXV 3         /* writes in all: spin -DMAXV=4 checks more (make soak) */
#endif
#define NEVER 255

byte disk[NR];
byte seen[NS * NR];     /* the version of each region each session last saw; NEVER */
byte ver = 0;           /* the newest version written (bounds the state space) */
byte window = 0;        /* agents between their second read and their replace */
bool locked = false;

proctype Agent(byte s) {
    byte r, b0, b1, knew;
end:
    do
    :: atomic { select(r : 0 .. NR - 1); seen[s * NR + r] = disk[r] }   /* read */
    :: ver < MAXV ->                                                      /* edit */
        select(r : 0 .. NR - 1);
        knew = seen[s * NR + r];
#ifndef NOLOCK
        atomic { !locked -> locked = true };
#endif
        atomic { b0 = disk[0]; b1 = disk[1] };                            /* load */
#ifndef NOGUARD
        atomic {
            if
            :: disk[r] != knew -> seen[s * NR + r] = disk[r]; goto release   /* deny */
            :: else
            fi
        };
#endif
        atomic {
#ifndef NOREREAD
            if
            :: disk[0] != b0 || disk[1] != b1 -> goto release   /* changed: check again */
            :: else
            fi;
#endif
            window++
        };
        atomic {                                                          /* replace */
            assert(disk[0] == b0 && disk[1] == b1);
            assert((r == 0 -> b0 : b1) == knew);
            ver++;
            disk[r] = ver;
            seen[s * NR + r] = ver;
            window--
        };
release:
#ifndef NOLOCK
        locked = false;
#endif
        skip
    od
}

proctype Outside() {
    byte r;
end:
    do
    :: atomic { ver < MAXV && window == 0 -> select(r : 0 .. NR - 1); ver++; disk[r] = ver }
    od
}

init {
    byte i;
    atomic {
        for (i : 0 .. NS * NR - 1) { seen[i] = NEVER };
        for (i : 0 .. NS - 1) { run Agent(i) };
        run Outside()
    }
}
