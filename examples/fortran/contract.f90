! examples/fortran/contract.f90 -- contract column-major Fortran arrays in place with tenferro,
! through the stable C ABI (include/tenferro/capi.h, libtenferro_c.so) and ISO_C_BINDING.
! Fortran 2008; `make test-fortran` builds and runs it. Each array is lent to tenferro as a
! handle on its own memory (no copy, column-major, Fortran's dims); results land in the
! Fortran output array itself.
module tenferro_capi
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int), parameter :: TFE_F64 = 1, TFE_C128 = 3, TFE_COLMAJOR = 0

  interface
    integer(c_int) function tfe_capi_version() bind(C, name="tfe_capi_version")
      import :: c_int
    end function
    type(c_ptr) function tfe_capi_last_error() bind(C, name="tfe_capi_last_error")
      import :: c_ptr
    end function
    integer(c_int) function tfe_handle_borrow(dtype, rank, dims, strides, order, data, release, ctx, out) &
        bind(C, name="tfe_handle_borrow")
      import :: c_int, c_int64_t, c_ptr, c_funptr
      integer(c_int), value :: dtype, rank, order
      integer(c_int64_t), intent(in) :: dims(*)
      type(c_ptr), value :: strides, data, ctx
      type(c_funptr), value :: release
      type(c_ptr), intent(out) :: out
    end function
    subroutine tfe_handle_release(h) bind(C, name="tfe_handle_release")
      import :: c_ptr
      type(c_ptr), value :: h
    end subroutine
    integer(c_int) function tfe_handle_einsum_into(out, expr, n, ops) bind(C, name="tfe_handle_einsum_into")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: out
      character(kind=c_char), intent(in) :: expr(*)
      integer(c_int), value :: n
      type(c_ptr), intent(in) :: ops(*)
    end function
    integer(c_int) function tfe_handle_contract(a, la, b, lb, c, lc) bind(C, name="tfe_handle_contract")
      import :: c_int, c_int32_t, c_ptr
      type(c_ptr), value :: a, b, c
      integer(c_int32_t), intent(in) :: la(*), lb(*), lc(*)
    end function
  end interface

contains

  ! Stops with tenferro's message when a call failed.
  subroutine check(status, what)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: what
    character(kind=c_char), pointer :: msg(:)
    integer :: n
    if (status == 0) return
    call c_f_pointer(tfe_capi_last_error(), msg, [512])
    n = 0
    do while (n < 512)
      if (msg(n + 1) == c_null_char) exit
      n = n + 1
    end do
    write (*, '(a, ": status ", i0, ": ", 512a)') what, status, msg(1:n)
    error stop 1
  end subroutine

  ! A handle on a contiguous Fortran array of the given shape (column-major, no copy).
  function lend(dtype, dims, data) result(h)
    integer(c_int), intent(in) :: dtype
    integer, intent(in) :: dims(:)
    type(c_ptr), intent(in) :: data
    type(c_ptr) :: h
    integer(c_int64_t) :: d(size(dims))
    d = int(dims, c_int64_t)
    call check(tfe_handle_borrow(dtype, int(size(dims), c_int), d, c_null_ptr, TFE_COLMAJOR, data, &
                                 c_null_funptr, c_null_ptr, h), "tfe_handle_borrow")
  end function
end module

program contract
  use tenferro_capi
  implicit none
  real(c_double), target :: a(3, 4), b(4, 5), c(3, 5), t(2, 3, 4), m(4, 3), v(2), vref(2)
  complex(c_double_complex), target :: x(2, 3), y(3, 2), z(2, 2)
  type(c_ptr) :: ops(2), hc
  integer :: i, j, k
  real(c_double) :: err

  if (tfe_capi_version() /= 1) error stop "unexpected tenferro C ABI version"
  call random_number(a)
  call random_number(b)
  call random_number(t)
  call random_number(m)
  c = 0
  v = 0

  ! c(i,k) = sum_j a(i,j) b(j,k): a matrix product, written into c.
  ops = [lend(TFE_F64, shape(a), c_loc(a)), lend(TFE_F64, shape(b), c_loc(b))]
  hc = lend(TFE_F64, shape(c), c_loc(c))
  call check(tfe_handle_einsum_into(hc, "ij,jk->ik" // c_null_char, 2_c_int, ops), "einsum ij,jk->ik")
  err = maxval(abs(c - matmul(a, b)))
  print '(a, es9.2)', "ij,jk->ik   max |c - matmul(a, b)| = ", err
  if (err > 1e-12_c_double) error stop "matrix product differs"
  call tfe_handle_release(ops(1))
  call tfe_handle_release(ops(2))
  call tfe_handle_release(hc)

  ! v(p) = sum_{q,r} t(p,q,r) m(r,q), with integer labels p=0, q=1, r=2.
  ops = [lend(TFE_F64, shape(t), c_loc(t)), lend(TFE_F64, shape(m), c_loc(m))]
  hc = lend(TFE_F64, shape(v), c_loc(v))
  call check(tfe_handle_contract(ops(1), [0_c_int32_t, 1_c_int32_t, 2_c_int32_t], ops(2), [2_c_int32_t, 1_c_int32_t], &
                                 hc, [0_c_int32_t]), "contract")
  vref = 0
  do k = 1, 4
    do j = 1, 3
      do i = 1, 2
        vref(i) = vref(i) + t(i, j, k) * m(k, j)
      end do
    end do
  end do
  err = maxval(abs(v - vref))
  print '(a, es9.2)', "pqr,rq->p   max |v - loops|        = ", err
  if (err > 1e-12_c_double) error stop "integer-label contraction differs"
  call tfe_handle_release(ops(1))
  call tfe_handle_release(ops(2))
  call tfe_handle_release(hc)

  ! Complex: z = x y.
  do j = 1, 3
    do i = 1, 2
      x(i, j) = cmplx(i, j, c_double_complex)
      y(j, i) = cmplx(j - i, 1, c_double_complex)
    end do
  end do
  ops = [lend(TFE_C128, shape(x), c_loc(x)), lend(TFE_C128, shape(y), c_loc(y))]
  hc = lend(TFE_C128, shape(z), c_loc(z))
  call check(tfe_handle_einsum_into(hc, "ij,jk->ik" // c_null_char, 2_c_int, ops), "einsum (complex)")
  err = maxval(abs(z - matmul(x, y)))
  print '(a, es9.2)', "complex     max |z - matmul(x, y)| = ", err
  if (err > 1e-12_c_double) error stop "complex product differs"
  call tfe_handle_release(ops(1))
  call tfe_handle_release(ops(2))
  call tfe_handle_release(hc)
  print '(a)', "fortran: ok"
end program
