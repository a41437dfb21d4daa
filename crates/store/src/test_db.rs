//! A fresh PostgreSQL database per test, on the server every machine here runs
//! (127.0.0.1:5432, trust auth; `BOARDSMITH_TEST_PG` names another), dropped when the test
//! ends, passed or not. Used by the store's unit tests and, through a `#[path]` module, by the
//! black-box tests' `support::pg`.

use tokio_postgres::NoTls;

/// A database of its own; dropped (connections and all) with this value.
pub struct TestDb {
    /// Its connection string.
    pub url: String,
    name: String,
}

fn admin_url() -> String {
    std::env::var("BOARDSMITH_TEST_PG")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

async fn admin() -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(&admin_url(), NoTls)
        .await
        .expect("PostgreSQL on 127.0.0.1:5432 (or BOARDSMITH_TEST_PG) is needed by this test");
    tokio::spawn(conn);
    client
}

impl TestDb {
    /// Creates `bs_test_<uuid>`.
    #[base::boxed]
    pub async fn new() -> Self {
        let name = format!("bs_test_{}", uuid::Uuid::now_v7().simple());
        admin().await.batch_execute(&format!("CREATE DATABASE {name}")).await.unwrap();
        let base = admin_url();
        let cut = base.rfind('/').expect("a database in BOARDSMITH_TEST_PG");
        Self { url: format!("{}/{name}", &base[..cut]), name }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        // Its own thread and runtime: drop may run inside (or outside) any runtime.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
            rt.block_on(async { admin().await.batch_execute(&sql).await.ok() })
        })
        .join();
    }
}
