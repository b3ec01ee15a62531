"""The 30 BugFix tasks as data: (name, parameters, reference lines separated by ';', bug).

A bug (k, right, wrong) puts `wrong` in place of the first editable `right` of line k (1-based);
the repair is `edit Lk wrong right`. The training bugs were chosen by measurement: every valid
one-token bug of each training program was played 96 times by the base agent, and each task took
the bug whose pass rate was nearest 0.21 within 0.15 to 0.30 (RL amplifies what the base agent
sometimes does). Most are swaps of a variable or an operator in the first line, and several
tasks share a repair: with one distinct repair per task (rates 0.07 to 0.22), two seeds of the
chapter's PPO run reached only 0.50 and 0.65 on train, against 0.81 and 0.97 with these. The
held-out tasks have names and bugs of their own, more of them constants and comparisons, which
the base agent repairs less often.
"""

TRAIN = (
    ('clamp', 'a b', 't = a + b ; if t > 9 then t = 9 ; return t', (1, 'a', 'b')),
    ('scale', 'a b', 't = a * 3 ; t = t + b ; return t', (1, 'a', 'b')),
    ('spread', 'a b', 't = a - b ; if t < 0 then t = 0 - t ; return t', (1, '-', '*')),
    ('bonus', 'a b c', 't = a + b ; if c > 5 then t = t + 1 ; return t', (1, '+', '-')),
    ('peak', 'a b', 't = a ; if b > a then t = b ; return t', (1, 'a', 'b')),
    ('floor', 'a b', 't = a - b ; if t < 0 then t = 0 ; return t', (1, '-', '*')),
    ('volume', 'a b c', 't = a * b ; t = t * c ; return t', (1, '*', '+')),
    ('offset', 'a b', 't = b + 2 ; t = t - a ; return t', (2, '-', '+')),
    ('gap', 'a b', 't = b - a ; return t', (1, 'b', 'a')),
    ('square', 'a b', 't = a * a ; t = t + b ; return t', (1, 'a', 'b')),
    ('pick', 'a b c', 't = b ; if a == 0 then t = c ; return t', (1, 'b', 'a')),
    ('toll', 'a b', 't = a + b ; if a >= 5 then t = t - 1 ; return t', (1, 'b', 'a')),
    ('mix', 'a b c', 't = a + b ; t = t * c ; return t', (1, '+', '-')),
    ('step', 'a b', 't = a + 1 ; if t > b then t = b ; return t', (1, 'a', 'b')),
    ('twice', 'a b', 't = a + b ; t = t + t ; return t', (1, 'b', 'a')),
    ('limit', 'a b', 't = a * 2 ; if t > b then t = b ; return t', (1, '*', '-')),
    ('nudge', 'a b c', 't = a - c ; t = t + b ; return t', (1, '-', '*')),
    ('lift', 'a b', 't = b - 1 ; if t < 0 then t = 0 ; return t', (1, 'b', 'a')),
    ('total', 'a b c', 't = a + b ; u = t + c ; return u', (1, '+', '-')),
    ('tally', 'a b', 't = a + 3 ; t = t * b ; return t', (2, '*', '+')),
)

HELDOUT = (
    ('shift', 'a b', 't = a + b ; t = t - 4 ; return t', (2, '4', '5')),
    ('maxsum', 'a b c', 't = a ; if c > t then t = c ; t = t + b ; return t', (2, 'c', 'b')),
    ('trim', 'a b', 't = a * b ; if t >= 9 then t = 8 ; return t', (2, '>=', '<=')),
    ('debt', 'a b c', 't = a - b ; t = t - c ; return t', (2, '-', '+')),
    ('blend', 'a b', 't = a * 2 ; u = t + b ; return u', (2, 't', 'a')),
    ('guard', 'a b', 't = b ; if a != 0 then t = a + b ; return t', (2, '!=', '==')),
    ('ramp', 'a b', 't = a + 2 ; t = t + b ; return t', (1, '2', '3')),
    ('cap', 'a b c', 't = a + c ; if t > b then t = b ; return t', (1, '+', '-')),
    ('weigh', 'a b', 't = a * 3 ; t = t - b ; return t', (1, '3', '4')),
    ('bound', 'a b', 't = a - b ; if t > 3 then t = 3 ; return t', (2, '3', '4')),
)
