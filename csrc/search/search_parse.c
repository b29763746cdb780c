/*
 * search_parse.c - the pattern language's parser: text -> earl_search_program.
 *
 * A hand-written lexer and recursive-descent parser.  Every error names the
 * line and column where the text went wrong and what was expected there;
 * names are resolved as they are read (a name must be defined, a variable
 * declared, above its first use), so a program that parses is complete and
 * only the trace-dependent checks (a class matching no event) are left to
 * earl_search_prepare.  The grammar (docs/patterns.md repeats it for users):
 *
 *   text     := { statement ";" }          (the last ";" may be left out)
 *   statement:= NAME ":=" clause            a named class or pattern
 *             | NAME variable { "," variable }   declarations ($x, ~x, *x)
 *   clause   := conj { "|" conj }
 *   conj     := relation { "&" relation }
 *   relation := operand [ OP operand | "-" "(" operand ")" "->" operand ]
 *   OP       := "-->" | "->" | "!-->" | "!->" | "||" | "!||"
 *   operand  := "(" clause ")" | variable | NAME [ "." class ] | literal [ "." class ]
 *   class    := NAME | literal
 *   literal  := "[" STRING "," STRING "," STRING "]"
 *
 * A statement NAME := X where X is a single class (a literal, a partner
 * class, or the name of a class) defines a class; anything else a pattern.
 * "#" starts a comment that runs to the end of the line.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_internal.h"

typedef enum tok_type {
    T_END = 0, T_NAME, T_VAR, T_STRING, T_LBRACK, T_RBRACK, T_COMMA, T_DOT, T_SEMI,
    T_DEFINE, T_LPAREN, T_RPAREN, T_AND, T_OR, T_REL, T_MINUS, T_ARROW_ONLY, T_BAD
} tok_type;

typedef struct token {
    tok_type type;
    int rel;               /* T_REL: search_rel; "->"/"-->" also mark arrow */
    int is_arrow;          /* a plain --> or -> (accepted after "-(C)") */
    const char *start;
    size_t len;
    int line, col;
} token;

typedef struct parser {
    const char *text, *p;
    int line;
    const char *line_start;
    token tok;
    earl_search_program *prog;
    earl_error *err;
    int failed;
} parser;

/* ---- program storage ------------------------------------------------------------ */

void earl_search_program_free(earl_search_program *p)
{
    if (!p)
        return;
    for (size_t k = 0; k < p->n_classes; k++)
        for (int f = 0; f < 3; f++)
            free(p->classes[k].field[f]);
    for (size_t k = 0; k < p->n_defs; k++)
        free(p->defs[k].name);
    for (size_t k = 0; k < p->n_vars; k++)
        free(p->vars[k].name);
    free(p->nodes);
    free(p->classes);
    free(p->defs);
    free(p->vars);
    free(p->patterns);
    free(p);
}

size_t earl_search_pattern_count(const earl_search_program *p)
{
    return p ? p->n_patterns : 0;
}

const char *earl_search_pattern_name(const earl_search_program *p, size_t k)
{
    return p && k < p->n_patterns ? p->defs[p->patterns[k]].name : NULL;
}

uint32_t search_def_arity(const earl_search_program *p, int32_t def)
{
    const search_def *d = &p->defs[def];
    if (d->is_pattern)
        return d->columns;
    return d->second >= 0 ? 2 : 1;
}

int search_glob(const char *g, const char *s)
{
    /* iterative matcher with one backtrack point: the last '*' seen */
    const char *star = NULL, *retry = NULL;
    while (*s) {
        if (*g == '*') {
            star = g++;
            retry = s;
        } else if (*g == *s) {
            g++;
            s++;
        } else if (star) {
            g = star + 1;
            s = ++retry;
        } else {
            return 0;
        }
    }
    while (*g == '*')
        g++;
    return *g == '\0';
}

/* ---- errors --------------------------------------------------------------------- */

static void describe(const token *t, char *buf, size_t cap)
{
    switch (t->type) {
    case T_END: snprintf(buf, cap, "the end of the text"); break;
    case T_NAME: snprintf(buf, cap, "the name '%.*s'", (int)(t->len > 40 ? 40 : t->len), t->start); break;
    case T_VAR: snprintf(buf, cap, "the variable '%.*s'", (int)(t->len > 40 ? 40 : t->len), t->start); break;
    case T_STRING: snprintf(buf, cap, "the string %.*s", (int)(t->len > 40 ? 40 : t->len), t->start); break;
    case T_BAD: snprintf(buf, cap, "'%.*s'", (int)t->len, t->start); break;
    default: snprintf(buf, cap, "'%.*s'", (int)t->len, t->start); break;
    }
}

static int fail_at(parser *ps, int line, int col, const char *fmt, ...) EARL_PRINTF(4, 5);
static int fail_at(parser *ps, int line, int col, const char *fmt, ...)
{
    if (ps->failed)
        return -1;
    ps->failed = 1;
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    earl_fail(ps->err, EARL_ERR_INVALID, "pattern: line %d, column %d: %s", line, col, msg);
    return -1;
}

static int expected(parser *ps, const char *what)
{
    char found[80];
    describe(&ps->tok, found, sizeof found);
    return fail_at(ps, ps->tok.line, ps->tok.col, "expected %s, found %s", what, found);
}

static int nomem(parser *ps)
{
    if (!ps->failed) {
        ps->failed = 1;
        earl_fail(ps->err, EARL_ERR_NOMEM, "pattern: out of memory while parsing");
    }
    return -1;
}

/* ---- lexer ---------------------------------------------------------------------- */

static int is_name_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static int is_name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

static void skip_space(parser *ps)
{
    for (;;) {
        char c = *ps->p;
        if (c == '\n') {
            ps->p++;
            ps->line++;
            ps->line_start = ps->p;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            ps->p++;
        } else if (c == '#') {
            while (*ps->p && *ps->p != '\n')
                ps->p++;
        } else {
            return;
        }
    }
}

static int starts(const char *p, const char *s) { return strncmp(p, s, strlen(s)) == 0; }

static void next(parser *ps)
{
    skip_space(ps);
    token *t = &ps->tok;
    memset(t, 0, sizeof *t);
    t->start = ps->p;
    t->line = ps->line;
    t->col = (int)(ps->p - ps->line_start) + 1;
    const char *p = ps->p;
    size_t len = 1;
    if (*p == '\0') {
        t->type = T_END;
        len = 0;
    } else if (is_name_start(*p)) {
        while (is_name_char(p[len]))
            len++;
        t->type = T_NAME;
    } else if ((*p == '$' || *p == '~' || *p == '*') && is_name_start(p[1])) {
        len = 2;
        while (is_name_char(p[len]))
            len++;
        t->type = T_VAR;
    } else if (*p == '"') {
        while (p[len] && p[len] != '"' && p[len] != '\n')
            len++;
        if (p[len] == '"') {
            len++;
            t->type = T_STRING;
        } else {
            t->type = T_BAD; /* reported by the parser as an unterminated string */
        }
    } else if (starts(p, "-->") || starts(p, "->")) {
        len = p[1] == '-' ? 3 : 2;
        t->type = T_REL;
        t->rel = SR_BEFORE;
        t->is_arrow = 1;
    } else if (starts(p, "!-->") || starts(p, "!->")) {
        len = p[2] == '-' ? 4 : 3;
        t->type = T_REL;
        t->rel = SR_NOT_BEFORE;
    } else if (starts(p, "!||")) {
        len = 3;
        t->type = T_REL;
        t->rel = SR_NOT_CONCURRENT;
    } else if (starts(p, "||")) {
        len = 2;
        t->type = T_REL;
        t->rel = SR_CONCURRENT;
    } else if (starts(p, ":=")) {
        len = 2;
        t->type = T_DEFINE;
    } else {
        switch (*p) {
        case '[': t->type = T_LBRACK; break;
        case ']': t->type = T_RBRACK; break;
        case ',': t->type = T_COMMA; break;
        case '.': t->type = T_DOT; break;
        case ';': t->type = T_SEMI; break;
        case '(': t->type = T_LPAREN; break;
        case ')': t->type = T_RPAREN; break;
        case '&': t->type = T_AND; break;
        case '|': t->type = T_OR; break;
        case '-': t->type = T_MINUS; break;
        default: t->type = T_BAD; break;
        }
    }
    t->len = len;
    ps->p += len;
}

/* ---- storage helpers -------------------------------------------------------------- */

static int32_t add_node(parser *ps, search_node_type type, int line, int col)
{
    earl_search_program *g = ps->prog;
    if (EARL_GROW(g->nodes, g->cap_nodes, g->n_nodes + 1))
        return nomem(ps);
    search_node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->type = (uint8_t)type;
    n->a = n->b = n->c = n->ref = -1;
    n->line = line;
    n->col = col;
    return (int32_t)g->n_nodes++;
}

static char *token_text(const token *t, size_t skip, size_t trim)
{
    size_t n = t->len - skip - trim;
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, t->start + skip, n);
        s[n] = '\0';
    }
    return s;
}

static int32_t find_def(const earl_search_program *g, const char *s, size_t len)
{
    for (size_t k = 0; k < g->n_defs; k++)
        if (strlen(g->defs[k].name) == len && memcmp(g->defs[k].name, s, len) == 0)
            return (int32_t)k;
    return -1;
}

static int32_t find_var(const earl_search_program *g, const char *s, size_t len)
{
    for (size_t k = 0; k < g->n_vars; k++)
        if (strlen(g->vars[k].name) == len && memcmp(g->vars[k].name, s, len) == 0)
            return (int32_t)k;
    return -1;
}

/* ---- classes -------------------------------------------------------------------- */

static int check_kind_field(parser *ps, const char *field, int line, int col)
{
    if (!field[0])
        return 0;
    for (int k = 0; k < EARL_KIND_COUNT; k++)
        if (search_glob(field, earl_kind_name((earl_kind)k)))
            return 0;
    if (strchr(field, '*'))
        return fail_at(ps, line, col, "the type \"%s\" matches no event kind (kinds are named "
                       "as earlc names them: ENTER, LEAVE, MPI_SEND, MPI_RECV, ...)", field);
    return fail_at(ps, line, col, "unknown event kind \"%s\" (kinds are named as earlc names "
                   "them: ENTER, LEAVE, MPI_SEND, MPI_ISEND, MPI_RECV, MPI_IRECV, "
                   "MPI_COLLECTIVE_BEGIN, ...)", field);
}

/* literal := "[" STRING "," STRING "," STRING "]"; returns the class index */
static int32_t parse_literal(parser *ps)
{
    static const char *const what[3] = {
        "the process string (\"rank R\", \"rank R thread T\", a location name or \"\")",
        "the type string (an event kind such as \"MPI_SEND\", or \"\")",
        "the text string (a region name, or \"\")"};
    int line = ps->tok.line, col = ps->tok.col;
    next(ps); /* [ */
    char *field[3] = {NULL, NULL, NULL};
    int type_line = 0, type_col = 0;
    for (int f = 0; f < 3; f++) {
        if (f > 0) {
            if (ps->tok.type != T_COMMA) {
                expected(ps, ps->tok.type == T_RBRACK ? "',' and two more fields: a class has "
                         "three strings [\"process\", \"type\", \"text\"]" : "','");
                goto fail;
            }
            next(ps);
        }
        if (ps->tok.type == T_BAD && ps->tok.start[0] == '"') {
            fail_at(ps, ps->tok.line, ps->tok.col, "unterminated string (a string ends with "
                    "'\"' on the same line)");
            goto fail;
        }
        if (ps->tok.type != T_STRING) {
            expected(ps, what[f]);
            goto fail;
        }
        if (f == 1) {
            type_line = ps->tok.line;
            type_col = ps->tok.col;
        }
        field[f] = token_text(&ps->tok, 1, 1);
        if (!field[f]) {
            nomem(ps);
            goto fail;
        }
        next(ps);
    }
    if (ps->tok.type != T_RBRACK) {
        expected(ps, "']' closing the class");
        goto fail;
    }
    if (check_kind_field(ps, field[1], type_line, type_col))
        goto fail;
    next(ps);
    earl_search_program *g = ps->prog;
    if (EARL_GROW(g->classes, g->cap_classes, g->n_classes + 1)) {
        nomem(ps);
        goto fail;
    }
    search_class *c = &g->classes[g->n_classes];
    for (int f = 0; f < 3; f++)
        c->field[f] = field[f];
    c->line = line;
    c->col = col;
    return (int32_t)g->n_classes++;
fail:
    for (int f = 0; f < 3; f++)
        free(field[f]);
    return -1;
}

/* The primitive class after a ".": a literal or the name of a primitive class. */
static int32_t parse_partner_side(parser *ps)
{
    if (ps->tok.type == T_LBRACK)
        return parse_literal(ps);
    if (ps->tok.type == T_NAME) {
        int32_t d = find_def(ps->prog, ps->tok.start, ps->tok.len);
        if (d < 0 || ps->prog->defs[d].is_pattern || ps->prog->defs[d].second >= 0) {
            fail_at(ps, ps->tok.line, ps->tok.col, "'%.*s' is not a class of single events "
                    "defined above (a partner class pairs two of them)", (int)ps->tok.len,
                    ps->tok.start);
            return -1;
        }
        next(ps);
        return ps->prog->defs[d].first;
    }
    expected(ps, "a class after '.' (a literal [\"process\", \"type\", \"text\"] or a class name)");
    return -1;
}

/* ---- clauses -------------------------------------------------------------------- */

static int32_t parse_clause(parser *ps);

static int32_t parse_operand(parser *ps)
{
    token t = ps->tok;
    earl_search_program *g = ps->prog;
    if (t.type == T_LPAREN) {
        next(ps);
        int32_t inner = parse_clause(ps);
        if (inner < 0)
            return -1;
        if (ps->tok.type != T_RPAREN) {
            expected(ps, "')'");
            return -1;
        }
        next(ps);
        return inner;
    }
    if (t.type == T_VAR) {
        int32_t v = find_var(g, t.start + 1, t.len - 1);
        if (v < 0)
            return fail_at(ps, t.line, t.col, "the variable '%.*s' is not declared above "
                           "(declare it as: ClassName %.*s;)", (int)t.len, t.start, (int)t.len,
                           t.start);
        if (g->vars[v].quant != t.start[0])
            return fail_at(ps, t.line, t.col, "'%.*s' is declared as '%c%s'", (int)t.len, t.start,
                           g->vars[v].quant, g->vars[v].name);
        int32_t n = add_node(ps, SN_VAR, t.line, t.col);
        if (n >= 0)
            g->nodes[n].ref = v;
        next(ps);
        return n;
    }
    int32_t first = -1, second = -1, def = -1;
    if (t.type == T_NAME) {
        def = find_def(g, t.start, t.len);
        if (def < 0)
            return fail_at(ps, t.line, t.col, "unknown name '%.*s' (classes and patterns must "
                           "be defined above their use)", (int)t.len, t.start);
        next(ps);
        if (ps->tok.type != T_DOT) {
            int32_t n = add_node(ps, SN_NAME, t.line, t.col);
            if (n >= 0)
                g->nodes[n].ref = def;
            return n;
        }
        const search_def *d = &g->defs[def];
        if (d->is_pattern || d->second >= 0)
            return fail_at(ps, t.line, t.col, "'%.*s' is not a class of single events: it cannot "
                           "be paired with '.'", (int)t.len, t.start);
        first = d->first;
    } else if (t.type == T_LBRACK) {
        first = parse_literal(ps);
        if (first < 0)
            return -1;
    } else {
        if (t.type == T_BAD && t.start[0] == '"')
            return fail_at(ps, t.line, t.col, "unterminated string");
        return expected(ps, "a class, a variable, a name or '('");
    }
    if (ps->tok.type == T_DOT) {
        next(ps);
        second = parse_partner_side(ps);
        if (second < 0)
            return -1;
    }
    int32_t n = add_node(ps, SN_CLASS, t.line, t.col);
    if (n >= 0) {
        g->nodes[n].ref = first;
        g->nodes[n].c = second;
    }
    return n;
}

static int32_t parse_relation(parser *ps)
{
    int line = ps->tok.line, col = ps->tok.col;
    int32_t left = parse_operand(ps);
    if (left < 0)
        return -1;
    if (ps->tok.type == T_REL) {
        int rel = ps->tok.rel;
        next(ps);
        int32_t right = parse_operand(ps);
        if (right < 0)
            return -1;
        int32_t n = add_node(ps, SN_REL, line, col);
        if (n >= 0) {
            ps->prog->nodes[n].rel = (uint8_t)rel;
            ps->prog->nodes[n].a = left;
            ps->prog->nodes[n].b = right;
        }
        return n;
    }
    if (ps->tok.type == T_MINUS) {
        next(ps);
        if (ps->tok.type != T_LPAREN) {
            expected(ps, "'(' of a limited precedence A -(C)-> B");
            return -1;
        }
        next(ps);
        int32_t middle = parse_operand(ps);
        if (middle < 0)
            return -1;
        if (ps->tok.type != T_RPAREN) {
            expected(ps, "')' of a limited precedence A -(C)-> B");
            return -1;
        }
        next(ps);
        if (!(ps->tok.type == T_REL && ps->tok.is_arrow)) {
            expected(ps, "'->' of a limited precedence A -(C)-> B");
            return -1;
        }
        next(ps);
        int32_t right = parse_operand(ps);
        if (right < 0)
            return -1;
        int32_t n = add_node(ps, SN_LIMITED, line, col);
        if (n >= 0) {
            ps->prog->nodes[n].a = left;
            ps->prog->nodes[n].b = right;
            ps->prog->nodes[n].c = middle;
        }
        return n;
    }
    return left;
}

static int32_t parse_binary(parser *ps, tok_type op, search_node_type type,
                            int32_t (*sub)(parser *))
{
    int line = ps->tok.line, col = ps->tok.col;
    int32_t left = sub(ps);
    while (left >= 0 && ps->tok.type == op) {
        next(ps);
        int32_t right = sub(ps);
        if (right < 0)
            return -1;
        int32_t n = add_node(ps, type, line, col);
        if (n < 0)
            return -1;
        ps->prog->nodes[n].a = left;
        ps->prog->nodes[n].b = right;
        left = n;
    }
    return left;
}

static int32_t parse_conj(parser *ps) { return parse_binary(ps, T_AND, SN_AND, parse_relation); }
static int32_t parse_clause(parser *ps) { return parse_binary(ps, T_OR, SN_OR, parse_conj); }

/* ---- statements ----------------------------------------------------------------- */

/* Columns of a pattern: the arities of the distinct $ variables of its tree. */
static void mark_returned(const earl_search_program *g, int32_t node, uint8_t *seen)
{
    if (node < 0)
        return;
    const search_node *n = &g->nodes[node];
    if (n->type == SN_VAR) {
        if (g->vars[n->ref].quant == '$')
            seen[n->ref] = 1;
        return;
    }
    if (n->type == SN_AND || n->type == SN_OR || n->type == SN_REL || n->type == SN_LIMITED) {
        mark_returned(g, n->a, seen);
        mark_returned(g, n->b, seen);
        if (n->type == SN_LIMITED)
            mark_returned(g, n->c, seen);
    }
}

static int parse_definition(parser *ps, token name)
{
    earl_search_program *g = ps->prog;
    next(ps); /* := */
    int32_t root = parse_clause(ps);
    if (root < 0)
        return -1;
    if (EARL_GROW(g->defs, g->cap_defs, g->n_defs + 1))
        return nomem(ps);
    search_def d = {0};
    d.name = token_text(&name, 0, 0);
    if (!d.name)
        return nomem(ps);
    d.line = name.line;
    d.col = name.col;
    d.first = d.second = d.root = -1;
    const search_node *r = &g->nodes[root];
    if (r->type == SN_CLASS) {
        d.first = r->ref;
        d.second = r->c;
    } else if (r->type == SN_NAME && !g->defs[r->ref].is_pattern) {
        d.first = g->defs[r->ref].first;
        d.second = g->defs[r->ref].second;
    } else {
        d.is_pattern = 1;
        d.root = root;
        uint8_t *seen = calloc(g->n_vars + 1, 1);
        if (!seen) {
            free(d.name);
            return nomem(ps);
        }
        mark_returned(g, root, seen);
        for (size_t v = 0; v < g->n_vars; v++)
            if (seen[v])
                d.columns += search_def_arity(g, g->vars[v].def);
        free(seen);
        if (EARL_GROW(g->patterns, g->cap_patterns, g->n_patterns + 1)) {
            free(d.name);
            return nomem(ps);
        }
        g->patterns[g->n_patterns++] = (int32_t)g->n_defs;
    }
    g->defs[g->n_defs++] = d;
    return 0;
}

static int parse_declaration(parser *ps, token type_name)
{
    earl_search_program *g = ps->prog;
    int32_t def = find_def(g, type_name.start, type_name.len);
    if (def < 0)
        return fail_at(ps, type_name.line, type_name.col, "unknown name '%.*s' (a declaration "
                       "names a class or pattern defined above)", (int)type_name.len,
                       type_name.start);
    if (g->defs[def].is_pattern && g->defs[def].columns == 0)
        return fail_at(ps, type_name.line, type_name.col, "the pattern '%s' returns no events "
                       "(it has no $ variable), so it cannot be a variable's type",
                       g->defs[def].name);
    for (;;) {
        token t = ps->tok;
        if (t.type != T_VAR)
            return expected(ps, "a variable ($name, ~name or *name)");
        if (find_var(g, t.start + 1, t.len - 1) >= 0)
            return fail_at(ps, t.line, t.col, "the variable '%.*s' is declared twice",
                           (int)t.len - 1, t.start + 1);
        if (find_def(g, t.start + 1, t.len - 1) >= 0)
            return fail_at(ps, t.line, t.col, "the variable '%.*s' has the name of a class or "
                           "pattern", (int)t.len - 1, t.start + 1);
        if (EARL_GROW(g->vars, g->cap_vars, g->n_vars + 1))
            return nomem(ps);
        search_var *v = &g->vars[g->n_vars];
        v->name = token_text(&t, 1, 0);
        if (!v->name)
            return nomem(ps);
        v->quant = t.start[0];
        v->def = def;
        v->line = t.line;
        v->col = t.col;
        g->n_vars++;
        next(ps);
        if (ps->tok.type != T_COMMA)
            return 0;
        next(ps);
    }
}

earl_status earl_search_parse(const char *text, earl_search_program **out, earl_error *err)
{
    *out = NULL;
    if (!text)
        return earl_fail(err, EARL_ERR_INVALID, "pattern: no text");
    earl_search_program *g = calloc(1, sizeof *g);
    if (!g)
        return earl_fail(err, EARL_ERR_NOMEM, "pattern: out of memory");
    parser ps = {.text = text, .p = text, .line = 1, .line_start = text, .prog = g, .err = err};
    next(&ps);
    while (!ps.failed && ps.tok.type != T_END) {
        if (ps.tok.type != T_NAME) {
            expected(&ps, "a statement: Name := ...; or a declaration Name $var, ...;");
            break;
        }
        token name = ps.tok;
        next(&ps);
        if (ps.tok.type == T_DEFINE) {
            if (find_def(g, name.start, name.len) >= 0 || find_var(g, name.start, name.len) >= 0) {
                fail_at(&ps, name.line, name.col, "'%.*s' is defined twice", (int)name.len,
                        name.start);
                break;
            }
            if (parse_definition(&ps, name))
                break;
        } else if (ps.tok.type == T_VAR) {
            if (parse_declaration(&ps, name))
                break;
        } else {
            expected(&ps, "':=' (a definition) or a variable ($x, ~x, *x: a declaration) after "
                     "the name");
            break;
        }
        if (ps.tok.type == T_END)
            break; /* the last statement's ';' may be left out */
        if (ps.tok.type != T_SEMI) {
            expected(&ps, ps.tok.type == T_REL || ps.tok.type == T_MINUS
                              ? "';' (a relation has two operands: write (a --> b) & (b --> c) "
                                "for a chain)"
                              : "';' or an operator (-->, !-->, ||, !||, &, |)");
            break;
        }
        next(&ps);
    }
    if (!ps.failed && g->n_patterns == 0)
        earl_fail(err, EARL_ERR_INVALID, "pattern: the text defines no pattern (a pattern is "
                  "Name := clause; with at least one relation or variable)"), ps.failed = 1;
    if (ps.failed) {
        earl_search_program_free(g);
        return err ? err->code : EARL_ERR_INVALID;
    }
    *out = g;
    return EARL_OK;
}
