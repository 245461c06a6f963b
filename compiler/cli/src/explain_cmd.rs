//! `tenxc explain CODE`: prints a code's catalog page.

use miette::{Result, miette};
use std::process::ExitCode;
use tenx_diagnostics::Code;

pub fn run(code: Option<&str>) -> Result<ExitCode> {
    let Some(text) = code else {
        for code in Code::ALL {
            println!(
                "{}  {:<34} {:<8} {}",
                code,
                code.name(),
                code.default_severity().as_str(),
                code.summary()
            );
        }
        return Ok(ExitCode::SUCCESS);
    };
    match Code::parse(text) {
        Some(code) => {
            print!("{}", code.page());
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let names: Vec<&str> = Code::ALL.iter().flat_map(|c| [c.as_str(), c.name()]).collect();
            let help = tenx_compiler::did_you_mean(text, names.iter())
                .map(|s| format!("did you mean `{s}`?"))
                .unwrap_or_else(|| "run `tenxc explain` to list every code".to_string());
            Err(miette!(help = help, "unknown diagnostic code `{text}`"))
        }
    }
}
