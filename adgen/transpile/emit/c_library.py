"""Identifiers of the C headers generated code includes (glibc, gcc, C99 and GNU modes).

Read off ``gcc -E`` of math.h, stdbool.h, stdint.h, stdio.h, stdlib.h, string.h and
stddef.h, also with ``-D_GNU_SOURCE`` (the binding's build includes Python.h, which defines
it: ``sincos``, ``exp10``... are declared there).  A parameter or local named like a macro
or a type would not compile (or would not parse in the binding's declarations); a module
function named like any of these would clash with the library at file scope.
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

#: functions the headers declare only with _GNU_SOURCE (as in the binding's build)
GNU_FUNCTIONS = frozenset("""
    _Exit acosf128 acosf32 acosf32x acosf64 acosf64x acoshf128 acoshf32 acoshf32x acoshf64
    acoshf64x aligned_alloc asinf128 asinf32 asinf32x asinf64 asinf64x asinhf128 asinhf32
    asinhf32x asinhf64 asinhf64x asprintf at_quick_exit atan2f128 atan2f32 atan2f32x
    atan2f64 atan2f64x atanf128 atanf32 atanf32x atanf64 atanf64x atanhf128 atanhf32
    atanhf32x atanhf64 atanhf64x basename canonicalize canonicalize_file_name canonicalizef
    canonicalizef128 canonicalizef32 canonicalizef32x canonicalizef64 canonicalizef64x
    canonicalizel cbrtf128 cbrtf32 cbrtf32x cbrtf64 cbrtf64x ceilf128 ceilf32 ceilf32x
    ceilf64 ceilf64x copysignf128 copysignf32 copysignf32x copysignf64 copysignf64x cosf128
    cosf32 cosf32x cosf64 cosf64x coshf128 coshf32 coshf32x coshf64 coshf64x cuserid daddl
    ddivl dfmal dmull dsqrtl dsubl erfcf128 erfcf32 erfcf32x erfcf64 erfcf64x erff128 erff32
    erff32x erff64 erff64x exp10 exp10f exp10f128 exp10f32 exp10f32x exp10f64 exp10f64x
    exp10l exp2f128 exp2f32 exp2f32x exp2f64 exp2f64x expf128 expf32 expf32x expf64 expf64x
    expm1f128 expm1f32 expm1f32x expm1f64 expm1f64x f32addf128 f32addf32x f32addf64
    f32addf64x f32divf128 f32divf32x f32divf64 f32divf64x f32fmaf128 f32fmaf32x f32fmaf64
    f32fmaf64x f32mulf128 f32mulf32x f32mulf64 f32mulf64x f32sqrtf128 f32sqrtf32x f32sqrtf64
    f32sqrtf64x f32subf128 f32subf32x f32subf64 f32subf64x f32xaddf128 f32xaddf64
    f32xaddf64x f32xdivf128 f32xdivf64 f32xdivf64x f32xfmaf128 f32xfmaf64 f32xfmaf64x
    f32xmulf128 f32xmulf64 f32xmulf64x f32xsqrtf128 f32xsqrtf64 f32xsqrtf64x f32xsubf128
    f32xsubf64 f32xsubf64x f64addf128 f64addf64x f64divf128 f64divf64x f64fmaf128 f64fmaf64x
    f64mulf128 f64mulf64x f64sqrtf128 f64sqrtf64x f64subf128 f64subf64x f64xaddf128
    f64xdivf128 f64xfmaf128 f64xmulf128 f64xsqrtf128 f64xsubf128 fabsf128 fabsf32 fabsf32x
    fabsf64 fabsf64x fadd faddl fcloseall fdimf128 fdimf32 fdimf32x fdimf64 fdimf64x fdiv
    fdivl ffma ffmal fgetpos64 fgets_unlocked floorf128 floorf32 floorf32x floorf64
    floorf64x fmaf128 fmaf32 fmaf32x fmaf64 fmaf64x fmaxf128 fmaxf32 fmaxf32x fmaxf64
    fmaxf64x fmaximum fmaximum_mag fmaximum_mag_num fmaximum_mag_numf fmaximum_mag_numf128
    fmaximum_mag_numf32 fmaximum_mag_numf32x fmaximum_mag_numf64 fmaximum_mag_numf64x
    fmaximum_mag_numl fmaximum_magf fmaximum_magf128 fmaximum_magf32 fmaximum_magf32x
    fmaximum_magf64 fmaximum_magf64x fmaximum_magl fmaximum_num fmaximum_numf
    fmaximum_numf128 fmaximum_numf32 fmaximum_numf32x fmaximum_numf64 fmaximum_numf64x
    fmaximum_numl fmaximumf fmaximumf128 fmaximumf32 fmaximumf32x fmaximumf64 fmaximumf64x
    fmaximuml fmaxmag fmaxmagf fmaxmagf128 fmaxmagf32 fmaxmagf32x fmaxmagf64 fmaxmagf64x
    fmaxmagl fminf128 fminf32 fminf32x fminf64 fminf64x fminimum fminimum_mag
    fminimum_mag_num fminimum_mag_numf fminimum_mag_numf128 fminimum_mag_numf32
    fminimum_mag_numf32x fminimum_mag_numf64 fminimum_mag_numf64x fminimum_mag_numl
    fminimum_magf fminimum_magf128 fminimum_magf32 fminimum_magf32x fminimum_magf64
    fminimum_magf64x fminimum_magl fminimum_num fminimum_numf fminimum_numf128
    fminimum_numf32 fminimum_numf32x fminimum_numf64 fminimum_numf64x fminimum_numl
    fminimumf fminimumf128 fminimumf32 fminimumf32x fminimumf64 fminimumf64x fminimuml
    fminmag fminmagf fminmagf128 fminmagf32 fminmagf32x fminmagf64 fminmagf64x fminmagl
    fmodf128 fmodf32 fmodf32x fmodf64 fmodf64x fmul fmull fopen64 fopencookie fputs_unlocked
    freopen64 frexpf128 frexpf32 frexpf32x frexpf64 frexpf64x fromfp fromfpf fromfpf128
    fromfpf32 fromfpf32x fromfpf64 fromfpf64x fromfpl fromfpx fromfpxf fromfpxf128
    fromfpxf32 fromfpxf32x fromfpxf64 fromfpxf64x fromfpxl fseeko64 fsetpos64 fsqrt fsqrtl
    fsub fsubl ftello64 getpayload getpayloadf getpayloadf128 getpayloadf32 getpayloadf32x
    getpayloadf64 getpayloadf64x getpayloadl getpt grantpt hypotf128 hypotf32 hypotf32x
    hypotf64 hypotf64x ilogbf128 ilogbf32 ilogbf32x ilogbf64 ilogbf64x j0f128 j0f32 j0f32x
    j0f64 j0f64x j1f128 j1f32 j1f32x j1f64 j1f64x jnf128 jnf32 jnf32x jnf64 jnf64x ldexpf128
    ldexpf32 ldexpf32x ldexpf64 ldexpf64x lgammaf128 lgammaf128_r lgammaf32 lgammaf32_r
    lgammaf32x lgammaf32x_r lgammaf64 lgammaf64_r lgammaf64x lgammaf64x_r llogb llogbf
    llogbf128 llogbf32 llogbf32x llogbf64 llogbf64x llogbl llrintf128 llrintf32 llrintf32x
    llrintf64 llrintf64x llroundf128 llroundf32 llroundf32x llroundf64 llroundf64x log10f128
    log10f32 log10f32x log10f64 log10f64x log1pf128 log1pf32 log1pf32x log1pf64 log1pf64x
    log2f128 log2f32 log2f32x log2f64 log2f64x logbf128 logbf32 logbf32x logbf64 logbf64x
    logf128 logf32 logf32x logf64 logf64x lrintf128 lrintf32 lrintf32x lrintf64 lrintf64x
    lroundf128 lroundf32 lroundf32x lroundf64 lroundf64x memfrob memmem mempcpy memrchr
    mkostemp mkostemp64 mkostemps mkostemps64 mkstemp64 mkstemps64 modff128 modff32 modff32x
    modff64 modff64x nanf128 nanf32 nanf32x nanf64 nanf64x nearbyintf128 nearbyintf32
    nearbyintf32x nearbyintf64 nearbyintf64x nextafterf128 nextafterf32 nextafterf32x
    nextafterf64 nextafterf64x nextdown nextdownf nextdownf128 nextdownf32 nextdownf32x
    nextdownf64 nextdownf64x nextdownl nextup nextupf nextupf128 nextupf32 nextupf32x
    nextupf64 nextupf64x nextupl obstack_printf obstack_vprintf posix_openpt powf128 powf32
    powf32x powf64 powf64x ptsname ptsname_r qsort_r quick_exit rawmemchr remainderf128
    remainderf32 remainderf32x remainderf64 remainderf64x remquof128 remquof32 remquof32x
    remquof64 remquof64x renameat2 rintf128 rintf32 rintf32x rintf64 rintf64x roundeven
    roundevenf roundevenf128 roundevenf32 roundevenf32x roundevenf64 roundevenf64x
    roundevenl roundf128 roundf32 roundf32x roundf64 roundf64x scalblnf128 scalblnf32
    scalblnf32x scalblnf64 scalblnf64x scalbnf128 scalbnf32 scalbnf32x scalbnf64 scalbnf64x
    secure_getenv setpayload setpayloadf setpayloadf128 setpayloadf32 setpayloadf32x
    setpayloadf64 setpayloadf64x setpayloadl setpayloadsig setpayloadsigf setpayloadsigf128
    setpayloadsigf32 setpayloadsigf32x setpayloadsigf64 setpayloadsigf64x setpayloadsigl
    sigabbrev_np sigdescr_np sincos sincosf sincosf128 sincosf32 sincosf32x sincosf64
    sincosf64x sincosl sinf128 sinf32 sinf32x sinf64 sinf64x sinhf128 sinhf32 sinhf32x
    sinhf64 sinhf64x sqrtf128 sqrtf32 sqrtf32x sqrtf64 sqrtf64x strcasestr strchrnul
    strerrordesc_np strerrorname_np strfromd strfromf strfromf128 strfromf32 strfromf32x
    strfromf64 strfromf64x strfroml strfry strtod_l strtof128 strtof128_l strtof32
    strtof32_l strtof32x strtof32x_l strtof64 strtof64_l strtof64x strtof64x_l strtof_l
    strtol_l strtold_l strtoll_l strtoul_l strtoull_l strverscmp tanf128 tanf32 tanf32x
    tanf64 tanf64x tanhf128 tanhf32 tanhf32x tanhf64 tanhf64x tgammaf128 tgammaf32
    tgammaf32x tgammaf64 tgammaf64x tmpfile64 totalorder totalorderf totalorderf128
    totalorderf32 totalorderf32x totalorderf64 totalorderf64x totalorderl totalordermag
    totalordermagf totalordermagf128 totalordermagf32 totalordermagf32x totalordermagf64
    totalordermagf64x totalordermagl truncf128 truncf32 truncf32x truncf64 truncf64x ufromfp
    ufromfpf ufromfpf128 ufromfpf32 ufromfpf32x ufromfpf64 ufromfpf64x ufromfpl ufromfpx
    ufromfpxf ufromfpxf128 ufromfpxf32 ufromfpxf32x ufromfpxf64 ufromfpxf64x ufromfpxl
    unlockpt vasprintf y0f128 y0f32 y0f32x y0f64 y0f64x y1f128 y1f32 y1f32x y1f64 y1f64x
    ynf128 ynf32 ynf32x ynf64 ynf64x
""".split())


# The binding's build compiles the generated headers after Python.h, which includes more of
# the C library (unistd.h, time.h, sys/stat.h, wchar.h, pthread.h, ...): read off ``gcc -E``
# and ``gcc -E -dM`` of Python.h (3.11, glibc), without the names starting with _ or Py.  A
# module function named like one of these (read, time, close, sleep) did not compile there.

#: functions and variables those headers declare
PYTHON_H_FUNCTIONS = frozenset("""
    access acct adjtime alarm asctime asctime_r brk btowc chdir chmod chown chroot clock
    clock_adjtime clock_getcpuclockid clock_getres clock_gettime clock_nanosleep
    clock_settime clone close close_range closefrom confstr crypt ctime ctime_r daemon
    daylight difftime dup dup2 dup3 dysize eaccess endusershell environ euidaccess execl
    execle execlp execv execve execveat execvp execvpe faccessat fchdir fchmod fchmodat
    fchown fchownat fdatasync fexecve fgetwc fgetwc_unlocked fgetws fgetws_unlocked fork
    fpathconf fputwc fputwc_unlocked fputws fputws_unlocked fstat fstat64 fstatat fstatat64
    fsync ftruncate ftruncate64 futimens futimes futimesat fwide fwprintf fwscanf
    get_current_dir_name getcpu getcwd getdate getdate_err getdate_r getdomainname
    getdtablesize getegid geteuid getgid getgroups gethostid gethostname getitimer getlogin
    getlogin_r getopt getpagesize getpass getpgid getpgrp getpid getppid getresgid getresuid
    getsid gettid gettimeofday getuid getumask getusershell getwc getwc_unlocked getwchar
    getwchar_unlocked getwd gmtime gmtime_r group_member imaxabs imaxdiv isalnum isalnum_l
    isalpha isalpha_l isascii isatty isblank isblank_l iscntrl iscntrl_l isctype isdigit
    isdigit_l isgraph isgraph_l islower islower_l isprint isprint_l ispunct ispunct_l
    isspace isspace_l isupper isupper_l isxdigit isxdigit_l lchmod lchown link linkat
    localtime localtime_r lockf lockf64 lseek lseek64 lstat lstat64 lutimes mbrlen mbrtowc
    mbsinit mbsnrtowcs mbsrtowcs mkdir mkdirat mkfifo mkfifoat mknod mknodat mktime
    nanosleep nice open_wmemstream optarg opterr optind optopt pathconf pause pipe pipe2
    pread pread64 profil program_invocation_name program_invocation_short_name
    pthread_atfork pthread_attr_destroy pthread_attr_getaffinity_np
    pthread_attr_getdetachstate pthread_attr_getguardsize pthread_attr_getinheritsched
    pthread_attr_getschedparam pthread_attr_getschedpolicy pthread_attr_getscope
    pthread_attr_getsigmask_np pthread_attr_getstack pthread_attr_getstackaddr
    pthread_attr_getstacksize pthread_attr_init pthread_attr_setaffinity_np
    pthread_attr_setdetachstate pthread_attr_setguardsize pthread_attr_setinheritsched
    pthread_attr_setschedparam pthread_attr_setschedpolicy pthread_attr_setscope
    pthread_attr_setsigmask_np pthread_attr_setstack pthread_attr_setstackaddr
    pthread_attr_setstacksize pthread_barrier_destroy pthread_barrier_init
    pthread_barrier_wait pthread_barrierattr_destroy pthread_barrierattr_getpshared
    pthread_barrierattr_init pthread_barrierattr_setpshared pthread_cancel
    pthread_clockjoin_np pthread_cond_broadcast pthread_cond_clockwait pthread_cond_destroy
    pthread_cond_init pthread_cond_signal pthread_cond_timedwait pthread_cond_wait
    pthread_condattr_destroy pthread_condattr_getclock pthread_condattr_getpshared
    pthread_condattr_init pthread_condattr_setclock pthread_condattr_setpshared
    pthread_create pthread_detach pthread_equal pthread_exit pthread_getaffinity_np
    pthread_getattr_default_np pthread_getattr_np pthread_getconcurrency
    pthread_getcpuclockid pthread_getname_np pthread_getschedparam pthread_getspecific
    pthread_join pthread_key_create pthread_key_delete pthread_mutex_clocklock
    pthread_mutex_consistent pthread_mutex_consistent_np pthread_mutex_destroy
    pthread_mutex_getprioceiling pthread_mutex_init pthread_mutex_lock
    pthread_mutex_setprioceiling pthread_mutex_timedlock pthread_mutex_trylock
    pthread_mutex_unlock pthread_mutexattr_destroy pthread_mutexattr_getprioceiling
    pthread_mutexattr_getprotocol pthread_mutexattr_getpshared pthread_mutexattr_getrobust
    pthread_mutexattr_getrobust_np pthread_mutexattr_gettype pthread_mutexattr_init
    pthread_mutexattr_setprioceiling pthread_mutexattr_setprotocol
    pthread_mutexattr_setpshared pthread_mutexattr_setrobust pthread_mutexattr_setrobust_np
    pthread_mutexattr_settype pthread_once pthread_rwlock_clockrdlock
    pthread_rwlock_clockwrlock pthread_rwlock_destroy pthread_rwlock_init
    pthread_rwlock_rdlock pthread_rwlock_timedrdlock pthread_rwlock_timedwrlock
    pthread_rwlock_tryrdlock pthread_rwlock_trywrlock pthread_rwlock_unlock
    pthread_rwlock_wrlock pthread_rwlockattr_destroy pthread_rwlockattr_getkind_np
    pthread_rwlockattr_getpshared pthread_rwlockattr_init pthread_rwlockattr_setkind_np
    pthread_rwlockattr_setpshared pthread_self pthread_setaffinity_np
    pthread_setattr_default_np pthread_setcancelstate pthread_setcanceltype
    pthread_setconcurrency pthread_setname_np pthread_setschedparam pthread_setschedprio
    pthread_setspecific pthread_spin_destroy pthread_spin_init pthread_spin_lock
    pthread_spin_trylock pthread_spin_unlock pthread_testcancel pthread_timedjoin_np
    pthread_tryjoin_np pthread_yield putwc putwc_unlocked putwchar putwchar_unlocked pwrite
    pwrite64 read readlink readlinkat revoke rmdir sbrk sched_get_priority_max
    sched_get_priority_min sched_getaffinity sched_getcpu sched_getparam sched_getscheduler
    sched_rr_get_interval sched_setaffinity sched_setparam sched_setscheduler sched_yield
    setdomainname setegid seteuid setgid sethostid sethostname setitimer setlogin setns
    setpgid setpgrp setregid setresgid setresuid setreuid setsid settimeofday setuid
    setusershell signgam sleep stat stat64 strftime strftime_l strptime strptime_l strtoimax
    strtoumax swab swprintf swscanf symlink symlinkat sync syncfs syscall sysconf tcgetpgrp
    tcsetpgrp time timegm timelocal timer_create timer_delete timer_getoverrun timer_gettime
    timer_settime timespec_get timespec_getres timezone toascii tolower tolower_l toupper
    toupper_l truncate truncate64 ttyname ttyname_r ttyslot tzname tzset ualarm umask
    ungetwc unlink unlinkat unshare usleep utimensat utimes vfork vfwprintf vfwscanf vhangup
    vswprintf vswscanf vwprintf vwscanf wcpcpy wcpncpy wcrtomb wcscasecmp wcscasecmp_l
    wcscat wcschr wcschrnul wcscmp wcscoll wcscoll_l wcscpy wcscspn wcsdup wcsftime
    wcsftime_l wcslen wcsncasecmp wcsncasecmp_l wcsncat wcsncmp wcsncpy wcsnlen wcsnrtombs
    wcspbrk wcsrchr wcsrtombs wcsspn wcsstr wcstod wcstod_l wcstof wcstof128 wcstof128_l
    wcstof32 wcstof32_l wcstof32x wcstof32x_l wcstof64 wcstof64_l wcstof64x wcstof64x_l
    wcstof_l wcstoimax wcstok wcstol wcstol_l wcstold wcstold_l wcstoul wcstoul_l wcstoumax
    wcswcs wcswidth wcsxfrm wcsxfrm_l wctob wcwidth wmemchr wmemcmp wmemcpy wmemmove
    wmempcpy wmemset wprintf write wscanf
""".split())

#: typedef names those headers define
PYTHON_H_TYPES = frozenset("""
    UsingDeprecatedTrashcanMacro allocfunc binaryfunc blkcnt64_t comparison_fn_t
    cookie_io_functions_t cpu_set_t crossinterpdatafunc descrgetfunc descrsetfunc destructor
    digit div_t error_t fd_set fpos64_t freefunc fsblkcnt64_t fsfilcnt64_t getattrfunc
    getattrofunc getbufferproc getiterfunc getter hashfunc imaxdiv_t initproc ino64_t
    inquiry iternextfunc ldiv_t lenfunc mbstate_t newfunc objobjargproc objobjproc off64_t
    printfunc pthread_barrier_t pthread_barrierattr_t pthread_cond_t pthread_condattr_t
    pthread_mutex_t pthread_mutexattr_t pthread_rwlock_t pthread_rwlockattr_t register_t
    releasebufferproc reprfunc richcmpfunc sdigit sendfunc setattrfunc setattrofunc setentry
    setter socklen_t ssizeargfunc ssizeobjargproc ssizessizeargfunc ssizessizeobjargproc
    stwodigits ternaryfunc traverseproc twodigits useconds_t vectorcallfunc visitproc wint_t
    wrapperfunc wrapperfunc_kwds
""".split())

#: macros those headers and Python.h's configuration define
PYTHON_H_MACROS = frozenset("""
    ACCESSPERMS ADJ_ESTERROR ADJ_FREQUENCY ADJ_MAXERROR ADJ_MICRO ADJ_NANO ADJ_OFFSET
    ADJ_OFFSET_SINGLESHOT ADJ_OFFSET_SS_READ ADJ_SETOFFSET ADJ_STATUS ADJ_TAI ADJ_TICK
    ADJ_TIMECONST AIO_PRIO_DELTA_MAX ALIGNOF_LONG ALIGNOF_SIZE_T ALLPERMS ANY_VARARGS
    BC_BASE_MAX BC_DIM_MAX BC_SCALE_MAX BC_STRING_MAX BOOL_MAX BOOL_WIDTH CHARCLASS_NAME_MAX
    CHAR_BIT CHAR_MAX CHAR_MIN CHAR_WIDTH CLOCKS_PER_SEC CLOCK_BOOTTIME CLOCK_BOOTTIME_ALARM
    CLOCK_MONOTONIC CLOCK_MONOTONIC_COARSE CLOCK_MONOTONIC_RAW CLOCK_PROCESS_CPUTIME_ID
    CLOCK_REALTIME CLOCK_REALTIME_ALARM CLOCK_REALTIME_COARSE CLOCK_TAI
    CLOCK_THREAD_CPUTIME_ID CLONE_CHILD_CLEARTID CLONE_CHILD_SETTID CLONE_DETACHED
    CLONE_FILES CLONE_FS CLONE_IO CLONE_NEWCGROUP CLONE_NEWIPC CLONE_NEWNET CLONE_NEWNS
    CLONE_NEWPID CLONE_NEWTIME CLONE_NEWUSER CLONE_NEWUTS CLONE_PARENT CLONE_PARENT_SETTID
    CLONE_PIDFD CLONE_PTRACE CLONE_SETTLS CLONE_SIGHAND CLONE_SYSVSEM CLONE_THREAD
    CLONE_UNTRACED CLONE_VFORK CLONE_VM CLOSE_RANGE_CLOEXEC CLOSE_RANGE_UNSHARE
    COLL_WEIGHTS_MAX COMMON_FIELDS CO_ASYNC_GENERATOR CO_COROUTINE CO_FUTURE_ABSOLUTE_IMPORT
    CO_FUTURE_ANNOTATIONS CO_FUTURE_BARRY_AS_BDFL CO_FUTURE_DIVISION
    CO_FUTURE_GENERATOR_STOP CO_FUTURE_PRINT_FUNCTION CO_FUTURE_UNICODE_LITERALS
    CO_FUTURE_WITH_STATEMENT CO_GENERATOR CO_ITERABLE_COROUTINE CO_MAXBLOCKS CO_NESTED
    CO_NEWLOCALS CO_OPTIMIZED CO_VARARGS CO_VARKEYWORDS CPU_ALLOC CPU_ALLOC_SIZE CPU_AND
    CPU_AND_S CPU_CLR CPU_CLR_S CPU_COUNT CPU_COUNT_S CPU_EQUAL CPU_EQUAL_S CPU_FREE
    CPU_ISSET CPU_ISSET_S CPU_OR CPU_OR_S CPU_SET CPU_SETSIZE CPU_SET_S CPU_XOR CPU_XOR_S
    CPU_ZERO CPU_ZERO_S CSIGNAL DEFFILEMODE DELAYTIMER_MAX DOUBLE_IS_LITTLE_ENDIAN_IEEE754
    E2BIG EACCES EADDRINUSE EADDRNOTAVAIL EADV EAFNOSUPPORT EAGAIN EALREADY EBADE EBADF
    EBADFD EBADMSG EBADR EBADRQC EBADSLT EBFONT EBUSY ECANCELED ECHILD ECHRNG ECOMM
    ECONNABORTED ECONNREFUSED ECONNRESET EDEADLK EDEADLOCK EDESTADDRREQ EDOM EDOTDOT EDQUOT
    EEXIST EFAULT EFBIG EHOSTDOWN EHOSTUNREACH EHWPOISON EIDRM EILSEQ EINPROGRESS EINTR
    EINVAL EIO EISCONN EISDIR EISNAM EKEYEXPIRED EKEYREJECTED EKEYREVOKED EL2HLT EL2NSYNC
    EL3HLT EL3RST ELIBACC ELIBBAD ELIBEXEC ELIBMAX ELIBSCN ELNRNG ELOOP EMEDIUMTYPE EMFILE
    EMLINK EMSGSIZE EMULTIHOP ENABLE_IPV6 ENAMETOOLONG ENAVAIL ENETDOWN ENETRESET
    ENETUNREACH ENFILE ENOANO ENOBUFS ENOCSI ENODATA ENODEV ENOENT ENOEXEC ENOKEY ENOLCK
    ENOLINK ENOMEDIUM ENOMEM ENOMSG ENONET ENOPKG ENOPROTOOPT ENOSPC ENOSR ENOSTR ENOSYS
    ENOTBLK ENOTCONN ENOTDIR ENOTEMPTY ENOTNAM ENOTRECOVERABLE ENOTSOCK ENOTSUP ENOTTY
    ENOTUNIQ ENXIO EOPNOTSUPP EOVERFLOW EOWNERDEAD EPERM EPFNOSUPPORT EPIPE EPROTO
    EPROTONOSUPPORT EPROTOTYPE ERANGE EREMCHG EREMOTE EREMOTEIO ERESTART ERFKILL EROFS
    ESHUTDOWN ESOCKTNOSUPPORT ESPIPE ESRCH ESRMNT ESTALE ESTRPIPE ETIME ETIMEDOUT
    ETOOMANYREFS ETXTBSY EUCLEAN EUNATCH EUSERS EWOULDBLOCK EXDEV EXFULL EXPR_NEST_MAX
    FP_INT_DOWNWARD FP_INT_TONEAREST FP_INT_TONEARESTFROMZERO FP_INT_TOWARDZERO
    FP_INT_UPWARD FP_LLOGB0 FP_LLOGBNAN FUTURE_ABSOLUTE_IMPORT FUTURE_ANNOTATIONS
    FUTURE_BARRY_AS_BDFL FUTURE_DIVISION FUTURE_GENERATORS FUTURE_GENERATOR_STOP
    FUTURE_NESTED_SCOPES FUTURE_PRINT_FUNCTION FUTURE_UNICODE_LITERALS FUTURE_WITH_STATEMENT
    FVC_ASCII FVC_MASK FVC_NONE FVC_REPR FVC_STR FVS_HAVE_SPEC FVS_MASK F_LOCK F_OK F_TEST
    F_TLOCK F_ULOCK HAVE_ACCEPT HAVE_ACCEPT4 HAVE_ACOSH HAVE_ADDRINFO HAVE_ALARM
    HAVE_ALLOCA_H HAVE_ASINH HAVE_ASM_TYPES_H HAVE_ATANH HAVE_BIND
    HAVE_BIND_TEXTDOMAIN_CODESET HAVE_BUILTIN_ATOMIC HAVE_BZLIB_H HAVE_CHMOD HAVE_CHOWN
    HAVE_CHROOT HAVE_CLOCK HAVE_CLOCK_GETRES HAVE_CLOCK_GETTIME HAVE_CLOCK_NANOSLEEP
    HAVE_CLOCK_SETTIME HAVE_CLOSE_RANGE HAVE_COMPUTED_GOTOS HAVE_CONFSTR HAVE_CONNECT
    HAVE_COPY_FILE_RANGE HAVE_CRYPT_H HAVE_CRYPT_R HAVE_CTERMID HAVE_CURSES_FILTER
    HAVE_CURSES_H HAVE_CURSES_HAS_KEY HAVE_CURSES_IMMEDOK HAVE_CURSES_IS_PAD
    HAVE_CURSES_IS_TERM_RESIZED HAVE_CURSES_RESIZETERM HAVE_CURSES_RESIZE_TERM
    HAVE_CURSES_SYNCOK HAVE_CURSES_TYPEAHEAD HAVE_CURSES_USE_ENV HAVE_CURSES_WCHGAT
    HAVE_DECL_RTLD_DEEPBIND HAVE_DECL_RTLD_GLOBAL HAVE_DECL_RTLD_LAZY HAVE_DECL_RTLD_LOCAL
    HAVE_DECL_RTLD_MEMBER HAVE_DECL_RTLD_NODELETE HAVE_DECL_RTLD_NOLOAD HAVE_DECL_RTLD_NOW
    HAVE_DEVICE_MACROS HAVE_DEV_PTMX HAVE_DIRENT_D_TYPE HAVE_DIRENT_H HAVE_DIRFD
    HAVE_DLFCN_H HAVE_DLOPEN HAVE_DUP HAVE_DUP2 HAVE_DUP3 HAVE_DYNAMIC_LOADING HAVE_ENDIAN_H
    HAVE_EPOLL HAVE_EPOLL_CREATE1 HAVE_ERF HAVE_ERFC HAVE_ERRNO_H HAVE_EVENTFD HAVE_EXECV
    HAVE_EXPLICIT_BZERO HAVE_EXPM1 HAVE_FACCESSAT HAVE_FCHDIR HAVE_FCHMOD HAVE_FCHMODAT
    HAVE_FCHOWN HAVE_FCHOWNAT HAVE_FCNTL_H HAVE_FDATASYNC HAVE_FDOPENDIR HAVE_FEXECVE
    HAVE_FLOCK HAVE_FORK HAVE_FORKPTY HAVE_FPATHCONF HAVE_FSEEKO HAVE_FSTATAT HAVE_FSTATVFS
    HAVE_FSYNC HAVE_FTELLO HAVE_FTIME HAVE_FTRUNCATE HAVE_FUTIMENS HAVE_FUTIMES
    HAVE_FUTIMESAT HAVE_GAI_STRERROR HAVE_GCC_ASM_FOR_X64 HAVE_GCC_ASM_FOR_X87
    HAVE_GCC_UINT128_T HAVE_GETADDRINFO HAVE_GETC_UNLOCKED HAVE_GETEGID HAVE_GETENTROPY
    HAVE_GETEUID HAVE_GETGID HAVE_GETGRGID HAVE_GETGRGID_R HAVE_GETGRNAM_R HAVE_GETGROUPLIST
    HAVE_GETGROUPS HAVE_GETHOSTBYADDR HAVE_GETHOSTBYNAME HAVE_GETHOSTBYNAME_R
    HAVE_GETHOSTBYNAME_R_6_ARG HAVE_GETHOSTNAME HAVE_GETITIMER HAVE_GETLOADAVG HAVE_GETLOGIN
    HAVE_GETNAMEINFO HAVE_GETPAGESIZE HAVE_GETPEERNAME HAVE_GETPGID HAVE_GETPGRP HAVE_GETPID
    HAVE_GETPPID HAVE_GETPRIORITY HAVE_GETPROTOBYNAME HAVE_GETPWENT HAVE_GETPWNAM_R
    HAVE_GETPWUID HAVE_GETPWUID_R HAVE_GETRANDOM HAVE_GETRANDOM_SYSCALL HAVE_GETRESGID
    HAVE_GETRESUID HAVE_GETRUSAGE HAVE_GETSERVBYNAME HAVE_GETSERVBYPORT HAVE_GETSID
    HAVE_GETSOCKNAME HAVE_GETSPENT HAVE_GETSPNAM HAVE_GETUID HAVE_GETWD HAVE_GRP_H
    HAVE_HSTRERROR HAVE_HTOLE64 HAVE_IF_NAMEINDEX HAVE_INET_ATON HAVE_INET_NTOA
    HAVE_INET_PTON HAVE_INITGROUPS HAVE_INTTYPES_H HAVE_KILL HAVE_KILLPG HAVE_LANGINFO_H
    HAVE_LCHOWN HAVE_LIBDL HAVE_LIBINTL_H HAVE_LIBREADLINE HAVE_LIBSQLITE3 HAVE_LINK
    HAVE_LINKAT HAVE_LINUX_AUXVEC_H HAVE_LINUX_CAN_BCM_H HAVE_LINUX_CAN_H
    HAVE_LINUX_CAN_J1939_H HAVE_LINUX_CAN_RAW_FD_FRAMES HAVE_LINUX_CAN_RAW_H
    HAVE_LINUX_CAN_RAW_JOIN_FILTERS HAVE_LINUX_LIMITS_H HAVE_LINUX_MEMFD_H
    HAVE_LINUX_NETLINK_H HAVE_LINUX_QRTR_H HAVE_LINUX_RANDOM_H HAVE_LINUX_SOUNDCARD_H
    HAVE_LINUX_TIPC_H HAVE_LINUX_VM_SOCKETS_H HAVE_LINUX_WAIT_H HAVE_LISTEN HAVE_LOCKF
    HAVE_LOG1P HAVE_LOG2 HAVE_LOGIN_TTY HAVE_LONG_DOUBLE HAVE_LONG_LONG HAVE_LSTAT
    HAVE_LUTIMES HAVE_MADVISE HAVE_MAKEDEV HAVE_MBRTOWC HAVE_MEMFD_CREATE HAVE_MEMORY_H
    HAVE_MEMRCHR HAVE_MKDIRAT HAVE_MKFIFO HAVE_MKFIFOAT HAVE_MKNOD HAVE_MKNODAT HAVE_MKTIME
    HAVE_MMAP HAVE_MREMAP HAVE_NANOSLEEP HAVE_NCURSES_H HAVE_NETDB_H HAVE_NETINET_IN_H
    HAVE_NETPACKET_PACKET_H HAVE_NET_IF_H HAVE_NICE HAVE_OPENAT HAVE_OPENDIR HAVE_OPENPTY
    HAVE_PATHCONF HAVE_PAUSE HAVE_PIPE HAVE_PIPE2 HAVE_POLL HAVE_POLL_H HAVE_POSIX_FADVISE
    HAVE_POSIX_FALLOCATE HAVE_POSIX_SPAWN HAVE_POSIX_SPAWNP HAVE_PREAD HAVE_PREADV
    HAVE_PREADV2 HAVE_PRLIMIT HAVE_PROTOTYPES HAVE_PTHREAD_CONDATTR_SETCLOCK
    HAVE_PTHREAD_GETCPUCLOCKID HAVE_PTHREAD_H HAVE_PTHREAD_KILL HAVE_PTHREAD_SIGMASK
    HAVE_PTY_H HAVE_PWRITE HAVE_PWRITEV HAVE_PWRITEV2 HAVE_READLINK HAVE_READLINKAT
    HAVE_READV HAVE_REALPATH HAVE_RECVFROM HAVE_RENAMEAT HAVE_RL_APPEND_HISTORY
    HAVE_RL_CATCH_SIGNAL HAVE_RL_COMPDISP_FUNC_T HAVE_RL_COMPLETION_APPEND_CHARACTER
    HAVE_RL_COMPLETION_DISPLAY_MATCHES_HOOK HAVE_RL_COMPLETION_MATCHES
    HAVE_RL_COMPLETION_SUPPRESS_APPEND HAVE_RL_PRE_INPUT_HOOK HAVE_RL_RESIZE_TERMINAL
    HAVE_RPC_RPC_H HAVE_SCHED_GET_PRIORITY_MAX HAVE_SCHED_H HAVE_SCHED_RR_GET_INTERVAL
    HAVE_SCHED_SETAFFINITY HAVE_SCHED_SETPARAM HAVE_SCHED_SETSCHEDULER HAVE_SEM_CLOCKWAIT
    HAVE_SEM_GETVALUE HAVE_SEM_OPEN HAVE_SEM_TIMEDWAIT HAVE_SEM_UNLINK HAVE_SENDFILE
    HAVE_SENDTO HAVE_SETEGID HAVE_SETEUID HAVE_SETGID HAVE_SETGROUPS HAVE_SETHOSTNAME
    HAVE_SETITIMER HAVE_SETJMP_H HAVE_SETLOCALE HAVE_SETPGID HAVE_SETPGRP HAVE_SETPRIORITY
    HAVE_SETREGID HAVE_SETRESGID HAVE_SETRESUID HAVE_SETREUID HAVE_SETSID HAVE_SETSOCKOPT
    HAVE_SETUID HAVE_SETVBUF HAVE_SHADOW_H HAVE_SHM_OPEN HAVE_SHM_UNLINK HAVE_SHUTDOWN
    HAVE_SIGACTION HAVE_SIGALTSTACK HAVE_SIGFILLSET HAVE_SIGINFO_T_SI_BAND HAVE_SIGINTERRUPT
    HAVE_SIGNAL_H HAVE_SIGPENDING HAVE_SIGRELSE HAVE_SIGTIMEDWAIT HAVE_SIGWAIT
    HAVE_SIGWAITINFO HAVE_SNPRINTF HAVE_SOCKADDR_ALG HAVE_SOCKADDR_STORAGE HAVE_SOCKET
    HAVE_SOCKETPAIR HAVE_SPAWN_H HAVE_SPLICE HAVE_SSIZE_T HAVE_STATVFS HAVE_STAT_TV_NSEC
    HAVE_STDARG_PROTOTYPES HAVE_STDINT_H HAVE_STDLIB_H HAVE_STD_ATOMIC HAVE_STRFTIME
    HAVE_STRINGS_H HAVE_STRING_H HAVE_STRSIGNAL HAVE_STRUCT_PASSWD_PW_GECOS
    HAVE_STRUCT_PASSWD_PW_PASSWD HAVE_STRUCT_STAT_ST_BLKSIZE HAVE_STRUCT_STAT_ST_BLOCKS
    HAVE_STRUCT_STAT_ST_RDEV HAVE_STRUCT_TM_TM_ZONE HAVE_SYMLINK HAVE_SYMLINKAT HAVE_SYNC
    HAVE_SYSCONF HAVE_SYSEXITS_H HAVE_SYSLOG_H HAVE_SYSTEM HAVE_SYS_AUXV_H HAVE_SYS_EPOLL_H
    HAVE_SYS_EVENTFD_H HAVE_SYS_FILE_H HAVE_SYS_IOCTL_H HAVE_SYS_MMAN_H HAVE_SYS_PARAM_H
    HAVE_SYS_POLL_H HAVE_SYS_RANDOM_H HAVE_SYS_RESOURCE_H HAVE_SYS_SELECT_H
    HAVE_SYS_SENDFILE_H HAVE_SYS_SOCKET_H HAVE_SYS_SOUNDCARD_H HAVE_SYS_STATVFS_H
    HAVE_SYS_STAT_H HAVE_SYS_SYSCALL_H HAVE_SYS_SYSMACROS_H HAVE_SYS_TIMES_H HAVE_SYS_TIME_H
    HAVE_SYS_TYPES_H HAVE_SYS_UIO_H HAVE_SYS_UN_H HAVE_SYS_UTSNAME_H HAVE_SYS_WAIT_H
    HAVE_SYS_XATTR_H HAVE_TCGETPGRP HAVE_TCSETPGRP HAVE_TEMPNAM HAVE_TERMIOS_H HAVE_TERM_H
    HAVE_TIMEGM HAVE_TIMES HAVE_TMPFILE HAVE_TMPNAM HAVE_TMPNAM_R HAVE_TM_ZONE HAVE_TRUNCATE
    HAVE_TTYNAME HAVE_UMASK HAVE_UNAME HAVE_UNISTD_H HAVE_UNLINKAT HAVE_UTIMENSAT
    HAVE_UTIMES HAVE_UTIME_H HAVE_UTMP_H HAVE_UUID_GENERATE_TIME_SAFE HAVE_UUID_H HAVE_VFORK
    HAVE_WAIT HAVE_WAIT3 HAVE_WAIT4 HAVE_WAITID HAVE_WAITPID HAVE_WCHAR_H HAVE_WCSCOLL
    HAVE_WCSFTIME HAVE_WCSXFRM HAVE_WMEMCMP HAVE_WORKING_TZSET HAVE_WRITEV HAVE_ZLIB_COPY
    HOST_NAME_MAX HUGE_VAL_F128 HUGE_VAL_F32 HUGE_VAL_F32X HUGE_VAL_F64 HUGE_VAL_F64X
    INT16_WIDTH INT32_WIDTH INT64_WIDTH INT8_WIDTH INTMAX_WIDTH INTPTR_WIDTH
    INT_FAST16_WIDTH INT_FAST32_WIDTH INT_FAST64_WIDTH INT_FAST8_WIDTH INT_LEAST16_WIDTH
    INT_LEAST32_WIDTH INT_LEAST64_WIDTH INT_LEAST8_WIDTH INT_MAX INT_MIN INT_WIDTH IOV_MAX
    ITIMER_PROF ITIMER_REAL ITIMER_VIRTUAL LINE_MAX LLONG_MAX LLONG_MIN LLONG_WIDTH
    LOGIN_NAME_MAX LONG_BIT LONG_LONG_MAX LONG_LONG_MIN LONG_MAX LONG_MIN LONG_WIDTH L_INCR
    L_SET L_XTND L_cuserid MAJOR_IN_SYSMACROS MAXFLOAT MAX_CANON MAX_CO_EXTRA_USERS
    MAX_INPUT MB_LEN_MAX METH_CLASS METH_COEXIST METH_FASTCALL METH_KEYWORDS METH_METHOD
    METH_NOARGS METH_O METH_STACKLESS METH_STATIC METH_VARARGS MOD_CLKA MOD_CLKB
    MOD_ESTERROR MOD_FREQUENCY MOD_MAXERROR MOD_MICRO MOD_NANO MOD_OFFSET MOD_STATUS MOD_TAI
    MOD_TIMECONST MQ_PRIO_MAX MVWDELCH_IS_EXPRESSION M_1_PIf M_1_PIf128 M_1_PIf32 M_1_PIf32x
    M_1_PIf64 M_1_PIf64x M_1_PIl M_2_PIf M_2_PIf128 M_2_PIf32 M_2_PIf32x M_2_PIf64
    M_2_PIf64x M_2_PIl M_2_SQRTPIf M_2_SQRTPIf128 M_2_SQRTPIf32 M_2_SQRTPIf32x M_2_SQRTPIf64
    M_2_SQRTPIf64x M_2_SQRTPIl M_Ef M_Ef128 M_Ef32 M_Ef32x M_Ef64 M_Ef64x M_El M_LN10f
    M_LN10f128 M_LN10f32 M_LN10f32x M_LN10f64 M_LN10f64x M_LN10l M_LN2f M_LN2f128 M_LN2f32
    M_LN2f32x M_LN2f64 M_LN2f64x M_LN2l M_LOG10Ef M_LOG10Ef128 M_LOG10Ef32 M_LOG10Ef32x
    M_LOG10Ef64 M_LOG10Ef64x M_LOG10El M_LOG2Ef M_LOG2Ef128 M_LOG2Ef32 M_LOG2Ef32x
    M_LOG2Ef64 M_LOG2Ef64x M_LOG2El M_PI_2f M_PI_2f128 M_PI_2f32 M_PI_2f32x M_PI_2f64
    M_PI_2f64x M_PI_2l M_PI_4f M_PI_4f128 M_PI_4f32 M_PI_4f32x M_PI_4f64 M_PI_4f64x M_PI_4l
    M_PIf M_PIf128 M_PIf32 M_PIf32x M_PIf64 M_PIf64x M_PIl M_SQRT1_2f M_SQRT1_2f128
    M_SQRT1_2f32 M_SQRT1_2f32x M_SQRT1_2f64 M_SQRT1_2f64x M_SQRT1_2l M_SQRT2f M_SQRT2f128
    M_SQRT2f32 M_SQRT2f32x M_SQRT2f64 M_SQRT2f64x M_SQRT2l NAME_MAX NGROUPS_MAX NL_ARGMAX
    NL_LANGMAX NL_MSGMAX NL_NMAX NL_SETMAX NL_TEXTMAX NOWAIT_LOCK NZERO PATH_MAX PIPE_BUF
    PRIX16 PRIX32 PRIX64 PRIX8 PRIXFAST16 PRIXFAST32 PRIXFAST64 PRIXFAST8 PRIXLEAST16
    PRIXLEAST32 PRIXLEAST64 PRIXLEAST8 PRIXMAX PRIXPTR PRId16 PRId32 PRId64 PRId8 PRIdFAST16
    PRIdFAST32 PRIdFAST64 PRIdFAST8 PRIdLEAST16 PRIdLEAST32 PRIdLEAST64 PRIdLEAST8 PRIdMAX
    PRIdPTR PRIi16 PRIi32 PRIi64 PRIi8 PRIiFAST16 PRIiFAST32 PRIiFAST64 PRIiFAST8
    PRIiLEAST16 PRIiLEAST32 PRIiLEAST64 PRIiLEAST8 PRIiMAX PRIiPTR PRIo16 PRIo32 PRIo64
    PRIo8 PRIoFAST16 PRIoFAST32 PRIoFAST64 PRIoFAST8 PRIoLEAST16 PRIoLEAST32 PRIoLEAST64
    PRIoLEAST8 PRIoMAX PRIoPTR PRIu16 PRIu32 PRIu64 PRIu8 PRIuFAST16 PRIuFAST32 PRIuFAST64
    PRIuFAST8 PRIuLEAST16 PRIuLEAST32 PRIuLEAST64 PRIuLEAST8 PRIuMAX PRIuPTR PRIx16 PRIx32
    PRIx64 PRIx8 PRIxFAST16 PRIxFAST32 PRIxFAST64 PRIxFAST8 PRIxLEAST16 PRIxLEAST32
    PRIxLEAST64 PRIxLEAST8 PRIxMAX PRIxPTR PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
    PTHREAD_ATTR_NO_SIGMASK_NP PTHREAD_BARRIER_SERIAL_THREAD PTHREAD_CANCELED
    PTHREAD_CANCEL_ASYNCHRONOUS PTHREAD_CANCEL_DEFERRED PTHREAD_CANCEL_DISABLE
    PTHREAD_CANCEL_ENABLE PTHREAD_COND_INITIALIZER PTHREAD_CREATE_DETACHED
    PTHREAD_CREATE_JOINABLE PTHREAD_DESTRUCTOR_ITERATIONS
    PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP PTHREAD_EXPLICIT_SCHED PTHREAD_INHERIT_SCHED
    PTHREAD_KEYS_MAX PTHREAD_KEY_T_IS_COMPATIBLE_WITH_INT PTHREAD_MUTEX_INITIALIZER
    PTHREAD_ONCE_INIT PTHREAD_PROCESS_PRIVATE PTHREAD_PROCESS_SHARED
    PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP PTHREAD_RWLOCK_INITIALIZER
    PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP PTHREAD_SCOPE_PROCESS
    PTHREAD_SCOPE_SYSTEM PTHREAD_STACK_MIN PTHREAD_SYSTEM_SCHED_SUPPORTED PTRDIFF_WIDTH
    RENAME_EXCHANGE RENAME_NOREPLACE RENAME_WHITEOUT RETSIGTYPE RE_DUP_MAX RTSIG_MAX R_OK
    SCHAR_MAX SCHAR_MIN SCHAR_WIDTH SCHED_BATCH SCHED_DEADLINE SCHED_FIFO SCHED_IDLE
    SCHED_ISO SCHED_OTHER SCHED_RESET_ON_FORK SCHED_RR SCNd16 SCNd32 SCNd64 SCNd8 SCNdFAST16
    SCNdFAST32 SCNdFAST64 SCNdFAST8 SCNdLEAST16 SCNdLEAST32 SCNdLEAST64 SCNdLEAST8 SCNdMAX
    SCNdPTR SCNi16 SCNi32 SCNi64 SCNi8 SCNiFAST16 SCNiFAST32 SCNiFAST64 SCNiFAST8
    SCNiLEAST16 SCNiLEAST32 SCNiLEAST64 SCNiLEAST8 SCNiMAX SCNiPTR SCNo16 SCNo32 SCNo64
    SCNo8 SCNoFAST16 SCNoFAST32 SCNoFAST64 SCNoFAST8 SCNoLEAST16 SCNoLEAST32 SCNoLEAST64
    SCNoLEAST8 SCNoMAX SCNoPTR SCNu16 SCNu32 SCNu64 SCNu8 SCNuFAST16 SCNuFAST32 SCNuFAST64
    SCNuFAST8 SCNuLEAST16 SCNuLEAST32 SCNuLEAST64 SCNuLEAST8 SCNuMAX SCNuPTR SCNx16 SCNx32
    SCNx64 SCNx8 SCNxFAST16 SCNxFAST32 SCNxFAST64 SCNxFAST8 SCNxLEAST16 SCNxLEAST32
    SCNxLEAST64 SCNxLEAST8 SCNxMAX SCNxPTR SEEK_DATA SEEK_HOLE SEM_VALUE_MAX SHRT_MAX
    SHRT_MIN SHRT_WIDTH SIG_ATOMIC_WIDTH SIZEOF_DOUBLE SIZEOF_FLOAT SIZEOF_FPOS_T SIZEOF_INT
    SIZEOF_LONG SIZEOF_LONG_DOUBLE SIZEOF_LONG_LONG SIZEOF_OFF_T SIZEOF_PID_T
    SIZEOF_PTHREAD_KEY_T SIZEOF_PTHREAD_T SIZEOF_PY_HASH_T SIZEOF_PY_UHASH_T SIZEOF_SHORT
    SIZEOF_SIZE_T SIZEOF_TIME_T SIZEOF_UINTPTR_T SIZEOF_VOID_P SIZEOF_WCHAR_T SIZEOF__BOOL
    SIZE_WIDTH SNAN SNANF SNANF128 SNANF32 SNANF32X SNANF64 SNANF64X SNANL SSIZE_MAX
    SSTATE_INTERNED_IMMORTAL SSTATE_INTERNED_MORTAL SSTATE_NOT_INTERNED STATX_ALL
    STATX_ATIME STATX_ATTR_APPEND STATX_ATTR_AUTOMOUNT STATX_ATTR_COMPRESSED STATX_ATTR_DAX
    STATX_ATTR_ENCRYPTED STATX_ATTR_IMMUTABLE STATX_ATTR_MOUNT_ROOT STATX_ATTR_NODUMP
    STATX_ATTR_VERITY STATX_BASIC_STATS STATX_BLOCKS STATX_BTIME STATX_CTIME STATX_DIOALIGN
    STATX_GID STATX_INO STATX_MNT_ID STATX_MODE STATX_MTIME STATX_NLINK STATX_SIZE
    STATX_TYPE STATX_UID STATX__RESERVED STA_CLK STA_CLOCKERR STA_DEL STA_FLL STA_FREQHOLD
    STA_INS STA_MODE STA_NANO STA_PLL STA_PPSERROR STA_PPSFREQ STA_PPSJITTER STA_PPSSIGNAL
    STA_PPSTIME STA_PPSWANDER STA_RONLY STA_UNSYNC STDC_HEADERS STDERR_FILENO STDIN_FILENO
    STDOUT_FILENO SYS_SELECT_WITH_SYS_TIME S_BLKSIZE S_IEXEC S_IFBLK S_IFCHR S_IFDIR S_IFIFO
    S_IFLNK S_IFMT S_IFREG S_IFSOCK S_IREAD S_IRGRP S_IROTH S_IRUSR S_IRWXG S_IRWXO S_IRWXU
    S_ISBLK S_ISCHR S_ISDIR S_ISFIFO S_ISGID S_ISLNK S_ISREG S_ISSOCK S_ISUID S_ISVTX
    S_IWGRP S_IWOTH S_IWRITE S_IWUSR S_IXGRP S_IXOTH S_IXUSR S_TYPEISMQ S_TYPEISSEM
    S_TYPEISSHM TEMP_FAILURE_RETRY TIMER_ABSTIME TIMESPEC_TO_TIMEVAL TIMEVAL_TO_TIMESPEC
    TIME_UTC TIME_WITH_SYS_TIME TTY_NAME_MAX UCHAR_MAX UCHAR_WIDTH UINT16_WIDTH UINT32_WIDTH
    UINT64_WIDTH UINT8_WIDTH UINTMAX_WIDTH UINTPTR_WIDTH UINT_FAST16_WIDTH UINT_FAST32_WIDTH
    UINT_FAST64_WIDTH UINT_FAST8_WIDTH UINT_LEAST16_WIDTH UINT_LEAST32_WIDTH
    UINT_LEAST64_WIDTH UINT_LEAST8_WIDTH UINT_MAX UINT_WIDTH ULLONG_MAX ULLONG_WIDTH
    ULONG_LONG_MAX ULONG_MAX ULONG_WIDTH USE_UNICODE_WCHAR_CACHE USHRT_MAX USHRT_WIDTH
    UTIME_NOW UTIME_OMIT WAIT_LOCK WCHAR_WIDTH WEOF WINDOW_HAS_FLAGS WINT_WIDTH
    WITH_DECIMAL_CONTEXTVAR WITH_DOC_STRINGS WITH_FREELISTS WITH_PYMALLOC WITH_THREAD
    WORD_BIT W_OK XATTR_LIST_MAX XATTR_NAME_MAX XATTR_SIZE_MAX X_OK assert assert_perror
    errno isalnum isalnum_l isalpha isalpha_l isascii isascii_l isblank isblank_l
    iscanonical iscntrl iscntrl_l isdigit isdigit_l iseqsig isgraph isgraph_l islower
    islower_l isprint isprint_l ispunct ispunct_l issignaling isspace isspace_l issubnormal
    isupper isupper_l isxdigit isxdigit_l iszero pthread_cleanup_pop
    pthread_cleanup_pop_restore_np pthread_cleanup_push pthread_cleanup_push_defer_np
    sched_priority st_atime st_ctime st_mtime static_assert strdupa strndupa timeradd
    timerclear timercmp timerisset timersub toascii toascii_l va_arg va_copy va_end va_start
""".split())
