// Perl harness (BabelCode has none; the mapping follows Perl's own data): numbers and strings are
// scalars, booleans are 1 and 0, lists are array refs, maps are hash refs, and a set is a hash ref
// whose keys are the elements (an array ref of distinct elements is accepted back too). A scalar
// cannot say what it holds, so the comparison walks the schema type, written out as a hash ref.
import { CODE_PLACEHOLDER, defineHarness } from "./harness.js";
import { literals, singleQuoted, typeRecord } from "./literals.js";

const perlHash = (entries: Array<[string, string]>): string =>
  `{${entries.map(([k, v]) => `${k} => ${v}`).join(", ")}}`;

export const perlLiteral = literals({
  boolean: (b) => (b ? "1" : "0"),
  string: singleQuoted,
  set: (items) => perlHash(items.map((item) => [item, "1"])),
  map: perlHash,
});

// $a and $b belong to sort, so the driver says $got and $want.
const DRIVER = `
# ---- evaluation harness ----
use Scalar::Util qw(looks_like_number);

sub __bc_equal {
    my ($got, $want, $type, $tol) = @_;
    my $kind = $type->{kind};
    if ($kind eq 'list') {
        return 0 unless ref($got) eq 'ARRAY' && scalar(@$got) == scalar(@$want);
        for my $i (0 .. $#$want) {
            return 0 unless __bc_equal($got->[$i], $want->[$i], $type->{element}, $tol);
        }
        return 1;
    }
    if ($kind eq 'set') {
        my @items;
        if (ref($got) eq 'HASH') { @items = keys %$got; }
        elsif (ref($got) eq 'ARRAY') { @items = @$got; }
        else { return 0; }
        my %seen = map { ("$_" => 1) } @items;
        return 0 unless scalar(@items) == scalar(keys %seen) && scalar(keys %seen) == scalar(keys %$want);
        for my $key (keys %$want) { return 0 unless exists $seen{$key}; }
        return 1;
    }
    if ($kind eq 'map') {
        return 0 unless ref($got) eq 'HASH' && scalar(keys %$got) == scalar(keys %$want);
        for my $key (keys %$want) {
            return 0 unless exists $got->{$key} && __bc_equal($got->{$key}, $want->{$key}, $type->{value}, $tol);
        }
        return 1;
    }
    return 0 if !defined($got) || ref($got);
    return (($got ? 1 : 0) == ($want ? 1 : 0)) ? 1 : 0 if $kind eq 'boolean';
    if ($kind eq 'float' || $kind eq 'double') {
        return looks_like_number($got) && abs($got - $want) <= $tol ? 1 : 0;
    }
    return looks_like_number($got) && $got == $want ? 1 : 0 if $kind eq 'integer' || $kind eq 'long';
    return $got eq $want ? 1 : 0;
}

sub __bc_check {
    my ($prefix, $thunk, $want, $type, $tol) = @_;
    my $got;
    my $ok = eval { $got = $thunk->(); 1 };
    my $result;
    if (!$ok) {
        my $error = $@;
        $result = ref($error) ? ref($error) : 'die';
    } else {
        $result = __bc_equal($got, $want, $type, $tol) ? 'PASSED' : 'FAILED';
    }
    print $prefix . $result . "\\n";
}
`;

export const perlHarness = defineHarness({
  language: "perl",
  naming: "snake",
  literal: perlLiteral,
  check: (tc, tol) =>
    `__bc_check(${singleQuoted(tc.prefix)}, sub { return ${tc.call}; }, ${tc.expected}, $__bc_type, ${tol});`,
  // utf8: string literals are characters, as the question's are; $|: reported tests survive a kill.
  program: (checks, question) =>
    `use utf8;\n$| = 1;\n\n${CODE_PLACEHOLDER}\n${DRIVER}\nmy $__bc_type = ${typeRecord(question.returnType, perlHash, (kind) => `'${kind}'`)};\n${checks.join("\n")}\n`,
  prepare: (code) => ({ prelude: "", body: code.replace(/^__(?:END|DATA)__\s*$[\s\S]*/m, "") }),
  callee: (fn, cls) => (cls ? `${cls}->new->${fn}` : fn),
});
