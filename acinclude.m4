dnl MK_SONAME(VAR, WHAT, CFLAGS, LIBS, INCLUDES, BODY, REGEX)
dnl Links a program calling BODY with LIBS and reads which library matching
dnl the extended REGEX it needs: VAR_SONAME is that soname (what dlopen
dnl finds through the loader's cache) and VAR_PATH the file it resolved to
dnl (for a library outside the loader's paths), both AC_DEFINE'd as strings
dnl for the code that loads the library on first use (src/core/lazy.h).
AC_DEFUN([MK_SONAME], [
  AC_MSG_CHECKING([the soname of $2])
  mk_save_CFLAGS=$CFLAGS
  mk_save_LIBS=$LIBS
  CFLAGS="$CFLAGS $3"
  LIBS="$4 $LIBS"
  mk_soname=
  mk_sopath=
  AC_LINK_IFELSE([AC_LANG_PROGRAM([$5], [$6])], [
    mk_soname=`$OBJDUMP -p conftest$EXEEXT 2>/dev/null | $AWK '$[]1 == "NEEDED" { print $[]2 }' | $EGREP "$7" | sed 1q`
    AS_IF([test -n "$mk_soname"],
      [mk_sopath=`ldd conftest$EXEEXT 2>/dev/null | $AWK -v n="$mk_soname" '$[]1 == n && $[]3 ~ /^\// { print $[]3 }' | sed 1q`])])
  CFLAGS=$mk_save_CFLAGS
  LIBS=$mk_save_LIBS
  AS_IF([test -z "$mk_soname"], [AC_MSG_RESULT([not found])
    AC_MSG_ERROR([cannot tell which library file $2 is (linking with $4)])])
  AC_MSG_RESULT([$mk_soname ($mk_sopath)])
  AC_DEFINE_UNQUOTED([$1_SONAME], ["$mk_soname"], [the soname of $2, loaded on first use])
  AC_DEFINE_UNQUOTED([$1_PATH], ["$mk_sopath"], [the file of $2 at configure time])
])
