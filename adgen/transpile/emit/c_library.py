"""Identifiers of the C headers generated code includes (glibc, gcc, C99 and GNU modes).

Read off ``gcc -E`` of math.h, stdbool.h, stdint.h, stdio.h, stdlib.h, string.h and
stddef.h.  A parameter or local named like a macro or a type would not compile (or
would not parse in the binding's declarations); a module function named like any of
these would clash with the library at file scope.
"""

from __future__ import annotations

#: object-like and function-like macros, including gcc's predefined unix, linux
MACROS = frozenset("""
    BIG_ENDIAN BUFSIZ BYTE_ORDER EOF EXIT_FAILURE EXIT_SUCCESS FD_CLR FD_ISSET FD_SET
    FD_SETSIZE FD_ZERO FILENAME_MAX FOPEN_MAX FP_ILOGB0 FP_ILOGBNAN FP_INFINITE FP_NAN
    FP_NORMAL FP_SUBNORMAL FP_ZERO HUGE_VAL HUGE_VALF HUGE_VALL INFINITY INT16_C INT16_MAX
    INT16_MIN INT32_C INT32_MAX INT32_MIN INT64_C INT64_MAX INT64_MIN INT8_C INT8_MAX
    INT8_MIN INTMAX_C INTMAX_MAX INTMAX_MIN INTPTR_MAX INTPTR_MIN INT_FAST16_MAX
    INT_FAST16_MIN INT_FAST32_MAX INT_FAST32_MIN INT_FAST64_MAX INT_FAST64_MIN INT_FAST8_MAX
    INT_FAST8_MIN INT_LEAST16_MAX INT_LEAST16_MIN INT_LEAST32_MAX INT_LEAST32_MIN
    INT_LEAST64_MAX INT_LEAST64_MIN INT_LEAST8_MAX INT_LEAST8_MIN LITTLE_ENDIAN L_ctermid
    L_tmpnam MATH_ERREXCEPT MATH_ERRNO MB_CUR_MAX M_1_PI M_2_PI M_2_SQRTPI M_E M_LN10 M_LN2
    M_LOG10E M_LOG2E M_PI M_PI_2 M_PI_4 M_SQRT1_2 M_SQRT2 NAN NFDBITS NULL PDP_ENDIAN
    PTRDIFF_MAX PTRDIFF_MIN P_tmpdir RAND_MAX SEEK_CUR SEEK_END SEEK_SET SIG_ATOMIC_MAX
    SIG_ATOMIC_MIN SIZE_MAX TMP_MAX UINT16_C UINT16_MAX UINT32_C UINT32_MAX UINT64_C
    UINT64_MAX UINT8_C UINT8_MAX UINTMAX_C UINTMAX_MAX UINTPTR_MAX UINT_FAST16_MAX
    UINT_FAST32_MAX UINT_FAST64_MAX UINT_FAST8_MAX UINT_LEAST16_MAX UINT_LEAST32_MAX
    UINT_LEAST64_MAX UINT_LEAST8_MAX WCHAR_MAX WCHAR_MIN WCONTINUED WEXITED WEXITSTATUS
    WIFCONTINUED WIFEXITED WIFSIGNALED WIFSTOPPED WINT_MAX WINT_MIN WNOHANG WNOWAIT WSTOPPED
    WSTOPSIG WTERMSIG WUNTRACED alloca be16toh be32toh be64toh bool false fpclassify htobe16
    htobe32 htobe64 htole16 htole32 htole64 isfinite isgreater isgreaterequal isinf isless
    islessequal islessgreater isnan isnormal isunordered le16toh le32toh le64toh linux
    math_errhandling offsetof signbit stderr stdin stdout true unix
""".split())

#: typedef names
TYPES = frozenset("""
    FILE blkcnt_t blksize_t caddr_t clock_t clockid_t daddr_t dev_t double_t fd_mask float_t
    fpos_t fsblkcnt_t fsfilcnt_t fsid_t gid_t id_t ino_t int16_t int32_t int64_t int8_t
    int_fast16_t int_fast32_t int_fast64_t int_fast8_t int_least16_t int_least32_t
    int_least64_t int_least8_t intmax_t intptr_t key_t locale_t loff_t mode_t nlink_t off_t
    pid_t pthread_attr_t pthread_key_t pthread_once_t pthread_spinlock_t pthread_t ptrdiff_t
    quad_t sigset_t size_t ssize_t suseconds_t time_t timer_t u_char u_int u_int16_t
    u_int32_t u_int64_t u_int8_t u_long u_quad_t u_short uid_t uint uint16_t uint32_t
    uint64_t uint8_t uint_fast16_t uint_fast32_t uint_fast64_t uint_fast8_t uint_least16_t
    uint_least32_t uint_least64_t uint_least8_t uintmax_t uintptr_t ulong ushort va_list
    wchar_t
""".split())

#: functions declared by the headers
FUNCTIONS = frozenset("""
    a64l abort abs acos acosf acosh acoshf acoshl acosl alloca arc4random arc4random_buf
    arc4random_uniform asin asinf asinh asinhf asinhl asinl atan atan2 atan2f atan2l atanf
    atanh atanhf atanhl atanl atexit atof atoi atol atoll bcmp bcopy bsearch bzero calloc
    cbrt cbrtf cbrtl ceil ceilf ceill clearenv clearerr clearerr_unlocked copysign copysignf
    copysignl cos cosf cosh coshf coshl cosl ctermid div dprintf drand48 drand48_r drem
    dremf dreml ecvt ecvt_r erand48 erand48_r erf erfc erfcf erfcl erff erfl exit exp exp2
    exp2f exp2l expf expl explicit_bzero expm1 expm1f expm1l fabs fabsf fabsl fclose fcvt
    fcvt_r fdim fdimf fdiml fdopen feof feof_unlocked ferror ferror_unlocked fflush
    fflush_unlocked ffs ffsl ffsll fgetc fgetc_unlocked fgetpos fgets fileno fileno_unlocked
    finite finitef finitel flockfile floor floorf floorl fma fmaf fmal fmax fmaxf fmaxl
    fmemopen fmin fminf fminl fmod fmodf fmodl fopen fprintf fputc fputc_unlocked fputs
    fread fread_unlocked free freopen frexp frexpf frexpl fscanf fseek fseeko fsetpos ftell
    ftello ftrylockfile funlockfile fwrite fwrite_unlocked gamma gammaf gammal gcvt getc
    getc_unlocked getchar getchar_unlocked getdelim getenv getline getloadavg gets getsubopt
    getw hypot hypotf hypotl ilogb ilogbf ilogbl index initstate initstate_r isinf isinff
    isinfl isnan isnanf isnanl j0 j0f j0l j1 j1f j1l jn jnf jnl jrand48 jrand48_r l64a labs
    lcong48 lcong48_r ldexp ldexpf ldexpl ldiv lgamma lgamma_r lgammaf lgammaf_r lgammal
    lgammal_r llabs lldiv llrint llrintf llrintl llround llroundf llroundl log log10 log10f
    log10l log1p log1pf log1pl log2 log2f log2l logb logbf logbl logf logl lrand48 lrand48_r
    lrint lrintf lrintl lround lroundf lroundl malloc mblen mbstowcs mbtowc memccpy memchr
    memcmp memcpy memmove memset mkdtemp mkstemp mkstemps mktemp modf modff modfl mrand48
    mrand48_r nan nanf nanl nearbyint nearbyintf nearbyintl nextafter nextafterf nextafterl
    nexttoward nexttowardf nexttowardl nrand48 nrand48_r on_exit open_memstream pclose
    perror popen posix_memalign pow powf powl printf pselect putc putc_unlocked putchar
    putchar_unlocked putenv puts putw qecvt qecvt_r qfcvt qfcvt_r qgcvt qsort rand rand_r
    random random_r realloc reallocarray realpath remainder remainderf remainderl remove
    remquo remquof remquol rename renameat rewind rindex rint rintf rintl round roundf
    roundl rpmatch scalb scalbf scalbl scalbln scalblnf scalblnl scalbn scalbnf scalbnl
    scanf seed48 seed48_r select setbuf setbuffer setenv setlinebuf setstate setstate_r
    setvbuf significand significandf significandl sin sinf sinh sinhf sinhl sinl snprintf
    sprintf sqrt sqrtf sqrtl srand srand48 srand48_r srandom srandom_r sscanf stpcpy stpncpy
    strcasecmp strcasecmp_l strcat strchr strcmp strcoll strcoll_l strcpy strcspn strdup
    strerror strerror_l strerror_r strlen strncasecmp strncasecmp_l strncat strncmp strncpy
    strndup strnlen strpbrk strrchr strsep strsignal strspn strstr strtod strtof strtok
    strtok_r strtol strtold strtoll strtoq strtoul strtoull strtouq strxfrm strxfrm_l system
    tan tanf tanh tanhf tanhl tanl tempnam tgamma tgammaf tgammal tmpfile tmpnam tmpnam_r
    trunc truncf truncl ungetc unsetenv valloc vdprintf vfprintf vfscanf vprintf vscanf
    vsnprintf vsprintf vsscanf wcstombs wctomb y0 y0f y0l y1 y1f y1l yn ynf ynl
""".split())
