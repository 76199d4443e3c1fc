#!/usr/bin/env python3
"""Look for the run's private keys in processes' memory (t_tls.sh, as root).

key_scan.py DIGESTS PID...: DIGESTS is the file halo-run writes when
HALO_TEST_TLS_KEY_DIGESTS names it ("ca HEX", "leaf HEX": the SHA-256 of each private
scalar as 32 little-endian bytes, which is how an OpenSSL BIGNUM holds it). Every
8-byte-aligned 32-byte window of every readable private mapping of each PID is hashed
and compared; one line per PID: "PID ca=found leaf=absent", or "PID unreadable: why".
A BIGNUM's words come from malloc (or OpenSSL's secure heap), 16-byte aligned, so an
8-byte stride cannot miss a live key."""
import hashlib
import sys

PAGE = 4096
ZERO_PAGE = bytes(PAGE)
ZERO_KEY = hashlib.sha256(bytes(32)).digest()


def digests(path):
    want = {}
    for line in open(path):
        k, _, v = line.strip().partition(" ")
        if k in ("ca", "leaf"):
            want[bytes.fromhex(v)] = k
    return want


def regions(pid):
    for line in open(f"/proc/{pid}/maps"):
        f = line.split()
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        name = f[5] if len(f) > 5 else ""
        # Private, readable memory: the heap, anonymous maps, stacks, .data/.bss.
        if f[1][0] != "r" or f[1][3] != "p" or name in ("[vvar]", "[vsyscall]", "[vvar_vclock]"):
            continue
        if hi - lo > (256 << 20):
            continue  # reserved address space (a sanitizer's shadow), not the heap
        yield lo, hi


def scan(pid, want):
    found = set()
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for lo, hi in regions(pid):
            try:
                mem.seek(lo)
                data = mem.read(hi - lo)
            except OSError:
                continue
            if not data:
                continue
            mv = memoryview(data)
            sha = hashlib.sha256
            n = len(data)
            # Page by page: the windows that lie wholly in a page of zeros are 32 zero
            # bytes, judged once (ZERO_KEY); the ones that reach into the next page are
            # hashed as any other. The same windows as one pass over every offset.
            for page in range(0, n, PAGE):
                end = min(page + PAGE, n)
                first = page
                if mv[page:end] == ZERO_PAGE[:end - page]:
                    if ZERO_KEY in want and end - page >= 32:
                        found.add(want[ZERO_KEY])
                    first = max(page, end - 24)
                for off in range(first, min(end, n - 31), 8):
                    h = sha(mv[off:off + 32]).digest()
                    if h in want:
                        found.add(want[h])
    return found


def main():
    want = digests(sys.argv[1])
    if set(want.values()) != {"ca", "leaf"}:
        print("no digests in", sys.argv[1])
        return 2
    for pid in sys.argv[2:]:
        try:
            found = scan(pid, want)
        except OSError as e:
            print(f"{pid} unreadable: {e.strerror}")
            continue
        print(pid, " ".join(f"{k}={'found' if k in found else 'absent'}" for k in ("ca", "leaf")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
