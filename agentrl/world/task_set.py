"""The 30 BugFix tasks as data: (name, parameters, reference lines separated by ';', bug).

A bug (k, right, wrong) puts `wrong` in place of the first editable `right` of line k (1-based);
the repair is `edit Lk wrong right`. Every training task has a repair of its own (no action solves
two tasks, checked by playing each fix on every task), the bugs sit in lines 1 to 3 and both
splits hold all four kinds (variable, operator, constant, comparison): RL has to learn one repair
per task, and what the held-out tasks share with them is the kind of repair, not the action.
The bugs were chosen by measurement: every valid one-token bug in lines 1-3 of each program was
played 32 times by the base agent, and each task took one it repairs sometimes, the kinds, lines
and distinct repairs above being the constraints (rates aimed at a mean of 0.17 for training and
0.11 for held-out tasks). Over 128 episodes each, the training tasks pass 0.07 to 0.37 and the
held-out ones 0.03 to 0.28. The base agent rarely repairs constants and comparisons (0.02 and
0.03 over all candidate bugs, against 0.14 for variables and 0.12 for operators), so each split
holds few of them, at the low end of its rates. Some programs' test inputs cannot tell a line's
bug from other edits of it (pick's and limit's), so which bugs they may carry is limited by the
rule that no fix solves two tasks.
"""

TRAIN = (
    ('clamp', 'a b', 't = a + b ; if t > 9 then t = 9 ; return t', (1, '+', '*')),
    ('scale', 'a b', 't = a * 3 ; t = t + b ; return t', (2, '+', '-')),
    ('spread', 'a b', 't = a - b ; if t < 0 then t = 0 - t ; return t', (3, 't', 'a')),
    ('bonus', 'a b c', 't = a + b ; if c > 5 then t = t + 1 ; return t', (1, '+', '-')),
    ('peak', 'a b', 't = a ; if b > a then t = b ; return t', (3, 't', 'b')),
    ('floor', 'a b', 't = a - b ; if t < 0 then t = 0 ; return t', (1, '-', '+')),
    ('volume', 'a b c', 't = a * b ; t = t * c ; return t', (1, '*', '+')),
    ('offset', 'a b', 't = b + 2 ; t = t - a ; return t', (2, '-', '*')),
    ('gap', 'a b', 't = b - a ; return t', (1, '-', '*')),
    ('square', 'a b', 't = a * a ; t = t + b ; return t', (1, '*', '-')),
    ('pick', 'a b c', 't = b ; if a == 0 then t = c ; return t', (2, '==', '!=')),
    ('toll', 'a b', 't = a + b ; if a >= 5 then t = t - 1 ; return t', (2, '-', '+')),
    ('mix', 'a b c', 't = a + b ; t = t * c ; return t', (2, '*', '-')),
    ('step', 'a b', 't = a + 1 ; if t > b then t = b ; return t', (2, 't', 'b')),
    ('twice', 'a b', 't = a + b ; t = t + t ; return t', (1, 'a', 'b')),
    ('limit', 'a b', 't = a * 2 ; if t > b then t = b ; return t', (1, '2', '1')),
    ('nudge', 'a b c', 't = a - c ; t = t + b ; return t', (2, '+', '*')),
    ('lift', 'a b', 't = b - 1 ; if t < 0 then t = 0 ; return t', (2, 't', 'a')),
    ('total', 'a b c', 't = a + b ; u = t + c ; return u', (3, 'u', 't')),
    ('tally', 'a b', 't = a + 3 ; t = t * b ; return t', (2, '*', '+')),
)

HELDOUT = (
    ('shift', 'a b', 't = a + b ; t = t - 4 ; return t', (3, 't', 'a')),
    ('maxsum', 'a b c', 't = a ; if c > t then t = c ; t = t + b ; return t', (3, 'b', 'a')),
    ('trim', 'a b', 't = a * b ; if t >= 9 then t = 8 ; return t', (1, '*', '-')),
    ('debt', 'a b c', 't = a - b ; t = t - c ; return t', (1, '-', '+')),
    ('blend', 'a b', 't = a * 2 ; u = t + b ; return u', (1, '2', '1')),
    ('guard', 'a b', 't = b ; if a != 0 then t = a + b ; return t', (2, '+', '*')),
    ('ramp', 'a b', 't = a + 2 ; t = t + b ; return t', (1, 'a', 'b')),
    ('cap', 'a b c', 't = a + c ; if t > b then t = b ; return t', (2, '>', '<')),
    ('weigh', 'a b', 't = a * 3 ; t = t - b ; return t', (2, '-', '+')),
    ('bound', 'a b', 't = a - b ; if t > 3 then t = 3 ; return t', (1, '-', '*')),
)
