/* A stand-in for Windows' bcryptprimitives.dll, which Wine 8 lacks: Rust's standard library calls its
 * ProcessPrng for random bytes (HashMap seeds). Only scripts/ci-windows.sh builds it, to run the
 * Windows programs and tests under Wine; it is never shipped. The bytes come from advapi32's
 * SystemFunction036 (RtlGenRandom), which Wine implements over the host's random source. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    /* SystemFunction036 takes a 32-bit length; ProcessPrng a pointer-sized one. */
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
