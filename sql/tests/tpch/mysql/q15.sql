-- TPC-H Q15 (Top Supplier), MySQL 8 dialect: the revenue view written as a CTE so the query is
-- one statement, validation parameters.
with revenue0 (supplier_no, total_revenue) as (
    select
        l_suppkey,
        sum(l_extendedprice * (1 - l_discount))
    from
        lineitem
    where
        l_shipdate >= '1996-01-01'
        and l_shipdate < date_add('1996-01-01', interval '3' month)
    group by
        l_suppkey
)
select
    s_suppkey,
    s_name,
    s_address,
    s_phone,
    total_revenue
from
    supplier,
    revenue0
where
    s_suppkey = supplier_no
    and total_revenue = (
        select
            max(total_revenue)
        from
            revenue0
    )
order by
    s_suppkey;
