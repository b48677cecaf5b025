/* The C functions of the @external functions of model.py, with their tangents (_d) and
 * adjoints (_b) written by hand.  Their signatures are those adgen gives a tangent f_d and
 * an adjoint f_b when every float parameter and result is differentiated
 * (docs/generated-code.md#external-c-functions):
 *
 *   double f_d(double x, double xd, double *retd)   returns f(x), sets *retd = f'(x) xd
 *   double f_b(double x, double *xb, double retb)   returns f(x), adds f'(x) retb to *xb
 *
 * An array parameter x comes with its extent x_shape0 after it (and after its tangent xd or
 * adjoint xb, which have the same extent).  The generated headers declare these prototypes;
 * adgen's build compiles this file after them, so a mismatch is a compile error. */
#include <math.h>
#include <stdint.h>

double softplus_c(double x)
{
    return fmax(x, 0.0) + log1p(exp(-fabs(x)));
}

/* the derivative of softplus: the logistic function, without overflow */
static double logistic(double x)
{
    return x >= 0.0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
}

double softplus_c_d(double x, double xd, double *retd)
{
    *retd = logistic(x) * xd;
    return softplus_c(x);
}

double softplus_c_b(double x, double *xb, double retb)
{
    *xb += logistic(x) * retb;
    return softplus_c(x);
}

double logsumexp_c(const double *x, int64_t x_shape0)
{
    double m = x[0];
    for (int64_t i = 0; i < x_shape0; ++i) {
        m = x[i] > m ? x[i] : m;
    }
    double s = 0.0;
    for (int64_t i = 0; i < x_shape0; ++i) {
        s += exp(x[i] - m);
    }
    return m + log(s);
}

/* the gradient of logsumexp is softmax(x): exp(x[i] - logsumexp(x)) */
double logsumexp_c_d(const double *x, const double *xd, int64_t x_shape0, double *retd)
{
    double y = logsumexp_c(x, x_shape0);
    double d = 0.0;
    for (int64_t i = 0; i < x_shape0; ++i) {
        d += exp(x[i] - y) * xd[i];
    }
    *retd = d;
    return y;
}

double logsumexp_c_b(const double *x, double *xb, int64_t x_shape0, double retb)
{
    double y = logsumexp_c(x, x_shape0);
    for (int64_t i = 0; i < x_shape0; ++i) {
        xb[i] += exp(x[i] - y) * retb;
    }
    return y;
}
